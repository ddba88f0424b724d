/**
 * Agent liveness through the application: each report (full or confirmed) is the host's last
 * report; a bind that needs its region programmed on a host whose agent stopped fails at once.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { createLogger } from "../../src/infra/logger.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import { fpga, fpgaRegion, until } from "./support.js";

const HOST = "compute1";
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
const ctx = (over: Partial<CommandContext> = {}): CommandContext => ({
  principal: "agent",
  correlationId: randomUUID(),
  causationId: randomUUID(),
  at: new Date().toISOString(),
  projectId: "p1",
  isAdmin: true,
  ...over,
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function newApp(store = new MemoryEventStore()) {
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-liveness-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return { store, app: new Application({ store, bitstreams: { contentDir: dir } }) };
}

describe("a host's liveness", () => {
  it("is LIVE after a report, STALE or GONE as the report ages, and STALE with no report known", async () => {
    const { app } = newApp();
    expect((await app.hostStatus(HOST)).liveness).toMatchObject({ state: "STALE", lastReportAt: null });
    const at = minutesAgo(1);
    await app.reportHostInventory(ctx({ at }), HOST, [fpga(HOST, "af")]);
    expect((await app.hostStatus(HOST)).liveness).toMatchObject({ state: "LIVE", lastReportAt: at });
    await app.reportHostInventory(ctx({ at: minutesAgo(5) }), "compute2", []);
    expect((await app.hostStatus("compute2")).liveness.state).toBe("STALE");
    await app.reportHostInventory(ctx({ at: minutesAgo(11) }), "compute3", []);
    expect((await app.hostStatus("compute3")).liveness.state).toBe("GONE");
  });

  it("a confirmed report counts as a report, though it writes nothing", async () => {
    const { store, app } = newApp();
    const first = await app.reportHostInventory(ctx({ at: minutesAgo(5) }), HOST, [fpga(HOST, "af")]);
    expect((await app.hostStatus(HOST)).liveness.state).toBe("STALE");
    const head = await store.headPosition();
    const now = new Date().toISOString();
    expect(await app.confirmHostInventory(HOST, first.digest!, now)).toMatchObject({ unchanged: 1 });
    expect(await store.headPosition()).toBe(head);
    expect((await app.hostStatus(HOST)).liveness).toMatchObject({ state: "LIVE", lastReportAt: now });
  });

  it("a host whose inventory is in the log but whose reports this process has not heard is STALE with no last report", async () => {
    const { store, app } = newApp();
    await app.reportHostInventory(ctx(), HOST, [fpga(HOST, "af")]);
    const restarted = newApp(store).app;
    expect(await restarted.hostStatus(HOST)).toMatchObject({ reported: true, liveness: { state: "STALE", lastReportAt: null } });
  });
});

describe("a bind that needs its region programmed", () => {
  async function fpgaHost(reportedAt: string) {
    const { store, app } = newApp();
    await app.reportHostInventory(ctx({ at: reportedAt }), HOST, [fpgaRegion(HOST)]);
    const bits = await app.uploadBitstream(ctx({ principal: "admin" }), { name: "a.gbs", functionId: "fa", regionType: "r1", vendor: "fake" }, Readable.from([Buffer.from("a bits")]));
    await app.createDeviceProfile(ctx(), { name: "by-id", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": bits.id }] });
    await app.createDeviceProfile(ctx(), { name: "plain", groups: [{ "resources:FPGA": "1" }] });
    const binder = new Binder({ store, app, log: createLogger("silent"), bindTimeoutMs: 600_000 });
    await binder.start();
    cleanups.push(() => binder.stop());
    const bind = async (profile: string) => {
      const [arq] = await app.createArqs(ctx(), { deviceProfileName: profile });
      await app.startBinds(ctx(), [{ arqUuid: arq!.uuid, hostname: HOST, deviceRpUuid: rpUuidFor(`${HOST}_FakeDevice`), instanceUuid: randomUUID() }], { allocate: true });
      await until(async () => (await app.getArq(arq!.uuid))!.state !== "BIND_STARTED" || (await app.programmingInFlight(HOST)).length > 0, 5000);
      return (await app.getArq(arq!.uuid))!;
    };
    return { app, bind };
  }

  it("fails at once, saying the host's agent is stale, instead of waiting for BIND_TIMEOUT_S; nothing is asked of the agent", async () => {
    const t = await fpgaHost(minutesAgo(5));
    const arq = await t.bind("by-id");
    expect(arq.state).toBe("BIND_FAILED");
    expect(arq.bindFailureReason).toMatch(/the agent of host compute1 is stale: its last report was at .*, 3\d\d s ago \(its agent reports every 60 s\)/);
    expect(await t.app.programmingInFlight(HOST)).toEqual([]);
  });

  it("on a live host it waits for the programming; on a stale host a bind that needs none still binds", async () => {
    const live = await fpgaHost(new Date().toISOString());
    expect((await live.bind("by-id")).state).toBe("BIND_STARTED");
    expect(await live.app.programmingInFlight(HOST)).toHaveLength(1);
    const stale = await fpgaHost(minutesAgo(5));
    expect((await stale.bind("plain")).state).toBe("BOUND");
  });
});
