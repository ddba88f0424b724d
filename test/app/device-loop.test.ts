/**
 * The device loop through the application: a NoExecute taint gives each holder an eviction notice
 * (through the eviction follower), the device drains, is cleaned before reuse, and qualified again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import { deviceLifecycle } from "../../src/domain/inventory/device-lifecycle.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { EvictionFollower } from "../../src/reactors/eviction/follower.js";
import { StateSnapshots } from "../../src/reactors/follower/state-snapshots.js";
import { ADMIN, ctx, fpga, hostState, setup } from "./support.js";

const HOST = "compute1";
const rp = rpUuidFor(`${HOST}_0000:af:00.0`);
const agent = { ...ADMIN, principal: "agent:compute1" };
const NOEXECUTE = { key: "cyborg.openstack.org/health", effect: "NoExecute" as const, reason: "XID 79: GPU has fallen off the bus" };

async function boundHolders(groups: Record<string, string>, n = 2) {
  const t = setup();
  await t.app.reportHostInventory(agent, HOST, [fpga(HOST, "af", 4)]);
  await t.app.createDeviceProfile(ADMIN, { name: "dp1", groups: [groups] });
  const arqs = [];
  for (let i = 0; i < n; i++) arqs.push(...(await t.app.createArqs(ctx(), { deviceProfileName: "dp1" })));
  const bound = await t.app.startBinds(ctx(), arqs.map((a, i) => ({ arqUuid: a.uuid, hostname: HOST, deviceRpUuid: rp, instanceUuid: `vm-${i}` })), { allocate: true });
  expect(bound.map((a) => a.state)).toEqual(arqs.map(() => "BOUND"));
  const deviceUuid = [...(await hostState(t.store, HOST)).devices.keys()][0]!;
  return { ...t, arqs: bound, deviceUuid };
}

describe("eviction", () => {
  it("a NoExecute taint gives every holder a notice with the deadline, once; the device drains as they leave", async () => {
    const { app, store, arqs, deviceUuid } = await boundHolders({ "resources:FPGA": "1" });
    const noticed: string[] = [];
    let allNoticed!: () => void;
    const signal = new Promise<void>((r) => (allNoticed = r));
    const onNotice = (n: { instanceUuid: string }) => noticed.push(n.instanceUuid) === arqs.length && allNoticed();
    const follower = new EvictionFollower({ store, app, log: pino({ level: "silent" }), deadlineMs: 300_000, onNotice });
    await follower.start();
    try {
      await app.taintDevice(ADMIN, HOST, deviceUuid, NOEXECUTE);
      await signal;
      for (const a of arqs) {
        expect((await app.getArq(a.uuid))!.eviction).toEqual({
          deviceUuid,
          taintKey: NOEXECUTE.key,
          reason: NOEXECUTE.reason,
          deadline: "2026-03-01T10:05:00.000Z",
          requestedAt: expect.any(String),
        });
      }
      expect(noticed.sort()).toEqual(["vm-0", "vm-1"]);
      expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("DRAINING");
      // Given again (a restart that reads the log again): nothing new.
      expect(await app.requestEvictions(ADMIN, { hostname: HOST, deviceUuid, taintKey: NOEXECUTE.key, taintValue: "", reason: "again", deadline: "x" })).toEqual([]);
      await app.deleteArqs(ctx(), { arqUuids: arqs.map((a) => a.uuid) });
      expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("DRAINED");
    } finally {
      await follower.stop();
    }
  });

  it("a NoSchedule taint, or a taint removed before the notices, asks nobody to move", async () => {
    const { app, deviceUuid, arqs } = await boundHolders({ "resources:FPGA": "1" });
    await app.taintDevice(ADMIN, HOST, deviceUuid, { ...NOEXECUTE, effect: "NoSchedule" });
    expect(await app.requestEvictions(ADMIN, { hostname: HOST, deviceUuid, taintKey: NOEXECUTE.key, taintValue: "", reason: "r", deadline: "d" })).toEqual([]);
    await app.taintDevice(ADMIN, HOST, deviceUuid, NOEXECUTE);
    await app.untaintDevice(ADMIN, HOST, deviceUuid, { key: NOEXECUTE.key, effect: "NoExecute" });
    expect(await app.requestEvictions(ADMIN, { hostname: HOST, deviceUuid, taintKey: NOEXECUTE.key, taintValue: "", reason: "r", deadline: "d" })).toEqual([]);
    expect((await app.getArq(arqs[0]!.uuid))!.eviction).toBe(null);
  });
});

describe("cleaning before reuse", () => {
  it("the last holder's release requests the clean; the agent's report and a healthy report offer the device again", async () => {
    const { app, store, arqs, deviceUuid } = await boundHolders({ "resources:FPGA": "1", "accel:clean_after_use": "true" });
    await app.deleteArqs(ctx(), { arqUuids: [arqs[0]!.uuid] });
    expect(await app.cleaningInFlight(HOST)).toEqual([]);
    await app.deleteArqs(ctx(), { arqUuids: [arqs[1]!.uuid] });
    const [request] = await app.cleaningInFlight(HOST);
    expect(request).toMatchObject({ hostname: HOST, deviceUuid, deviceType: "FPGA", driverNames: ["intel"], controlPath: { type: "PCI" }, reason: expect.stringMatching(/clean_after_use/) });

    const [next] = await app.createArqs(ctx(), { deviceProfileName: "dp1" });
    await app.startBinds(ctx(), [{ arqUuid: next!.uuid, hostname: HOST, deviceRpUuid: rp, instanceUuid: "vm-9" }], { allocate: true });
    expect(await app.allocateForArq(ADMIN, next!.uuid)).toMatchObject({ ok: false, reason: expect.stringMatching(/being cleaned/) });

    const result = { hostname: HOST, deviceUuid, requestId: request!.requestId, ok: true, digest: "sha256:1f", command: ["fpgaconf", "blank.gbs"], durationMs: 800 };
    expect(await app.reportCleaningResult(agent, result)).toEqual({ recorded: true });
    expect(await app.reportCleaningResult(agent, result)).toEqual({ recorded: false });
    expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("QUALIFYING");
    await app.reportHostInventory(agent, HOST, [fpga(HOST, "af", 4)]);
    expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("AVAILABLE");
  });

  it("a failed clean leaves the device FAILED with the reason; an operator's clean repairs it", async () => {
    const { app, store, arqs, deviceUuid } = await boundHolders({ "resources:FPGA": "1" }, 1);
    await app.setDeviceCleaningRequired(ADMIN, HOST, deviceUuid, true);
    await app.deleteArqs(ctx(), { arqUuids: [arqs[0]!.uuid] });
    const [request] = await app.cleaningInFlight(HOST);
    await app.reportCleaningResult(agent, { hostname: HOST, deviceUuid, requestId: request!.requestId, ok: false, reason: "fpgaconf: exit code 1" });
    const failed = (await hostState(store, HOST)).devices.get(deviceUuid)!;
    expect(deviceLifecycle(failed)).toBe("FAILED");
    expect(failed.cleaning.failed!.reason).toBe("cleaning failed: fpgaconf: exit code 1");
    const again = await app.requestDeviceCleaning(ADMIN, HOST, deviceUuid, "card reseated");
    expect(again).toMatchObject({ reason: "card reseated" });
    expect(again!.requestId).not.toBe(request!.requestId);
  });
});

describe("eviction across restarts", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("acts on taints made while it was stopped, reading the log only after the position it kept", async () => {
    const { app, store, arqs, deviceUuid } = await boundHolders({ "resources:FPGA": "1" });
    const dir = mkdtempSync(join(tmpdir(), "cyborg-es-eviction-"));
    dirs.push(dir);
    const log = pino({ level: "silent" });
    const snapshots = () => new StateSnapshots({ dir, events: store, log, intervalMs: 0 });
    // The first start keeps no position yet: it reads the whole log, and keeps the head's position at stop.
    const first = new EvictionFollower({ store, app, log, deadlineMs: 300_000, snapshots: snapshots() });
    await first.start();
    await expect.poll(() => first.status().state).toBe("live");
    await first.stop();
    const kept = await store.headPosition();
    // Taken while no follower runs; the next start reads on from the kept position and gives the notices.
    await app.taintDevice(ADMIN, HOST, deviceUuid, NOEXECUTE);
    const reads: Array<bigint | undefined> = [];
    const readAll = store.readAll.bind(store);
    store.readAll = (o) => (o?.filter && reads.push(o.after), readAll(o));
    const noticed: string[] = [];
    const second = new EvictionFollower({ store, app, log, deadlineMs: 300_000, snapshots: snapshots(), onNotice: (n) => void noticed.push(n.instanceUuid) });
    await second.start();
    try {
      await expect.poll(() => noticed.length).toBe(arqs.length);
      expect(reads[0]).toBe(kept);
    } finally {
      await second.stop();
    }
  });
});
