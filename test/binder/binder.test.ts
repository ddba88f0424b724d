import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { createLogger } from "../../src/infra/logger.js";

const ctx = (): CommandContext => ({
  principal: "test",
  correlationId: randomUUID(),
  causationId: randomUUID(),
  at: new Date().toISOString(),
  projectId: "p1",
  isAdmin: true,
});

const fpga = (bus: string, handles: number): DriverDevice => ({
  type: "FPGA",
  vendor: "0xABCD",
  model: "test",
  controlPath: { type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } },
  deployables: [
    {
      name: `compute1_${bus}`,
      numAccelerators: handles,
      driverName: "fake",
      attributes: [{ key: "rc", value: "FPGA" }],
      attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "TEST_PCI" as const, info: { domain: "0000", bus, device: "00", function: String(i + 1) } })),
    },
  ],
});

async function until(check: () => Promise<boolean>, what: string, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A host with devices, a one-FPGA profile, and ARQs put in BIND_STARTED while no binder runs. */
async function given(devices: DriverDevice[], arqCount = 1) {
  const store = new MemoryEventStore();
  const app = new Application({ store });
  await app.reportHostInventory(ctx(), "compute1", devices);
  await app.createDeviceProfile(ctx(), { name: "one", groups: [{ "resources:FPGA": "1" }] });
  const rp = (await import("../../src/domain/inventory/ids.js")).rpUuidFor(devices[0]!.deployables[0]!.name);
  const arqs = [];
  for (let i = 0; i < arqCount; i++) {
    const [arq] = await app.createArqs(ctx(), { deviceProfileName: "one" });
    await app.startBinds(ctx(), [{ arqUuid: arq!.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }]);
    arqs.push(arq!);
  }
  return { store, app, arqs, rp };
}

const binders: Binder[] = [];
afterEach(async () => {
  for (const b of binders.splice(0)) await b.stop();
});
function startBinder(opts: ConstructorParameters<typeof Binder>[0]) {
  const b = new Binder(opts);
  binders.push(b);
  return b.start().then(() => b);
}

describe("the binder", () => {
  it("finishes an ARQ left in BIND_STARTED when it starts (a restart in the middle of a bind)", async () => {
    const { store, app, arqs } = await given([fpga("0c", 2)], 2);
    for (const a of arqs) expect((await app.getArq(a.uuid))!.state).toBe("BIND_STARTED");
    await startBinder({ store, app, log: createLogger("silent"), bindTimeoutMs: 60_000 });
    await until(async () => (await Promise.all(arqs.map((a) => app.getArq(a.uuid)))).every((a) => a!.state === "BOUND"), "both BOUND");
    const handles = await Promise.all(arqs.map(async (a) => (await app.getArq(a.uuid))!.attachHandleUuid));
    expect(new Set(handles).size).toBe(2);
  });

  it("leaves alone a bind the API finished in the same commit, and allocates one it only started", async () => {
    const { store, app, rp } = await given([fpga("0c", 2)], 0);
    const allocated: string[] = [];
    const counting = {
      allocateForArq: (c: CommandContext, arqUuid: string) => (allocated.push(arqUuid), app.allocateForArq(c, arqUuid)),
      failBind: app.failBind.bind(app),
    };
    const binder = await startBinder({ store, app: counting, log: createLogger("silent"), bindTimeoutMs: 60_000 });
    const bind = async (allocate: boolean) => {
      const [arq] = await app.createArqs(ctx(), { deviceProfileName: "one" });
      await app.startBinds(ctx(), [{ arqUuid: arq!.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: randomUUID() }], { allocate });
      return arq!.uuid;
    };
    const inline = await bind(true);
    expect((await app.getArq(inline))!.state).toBe("BOUND");
    const started = await bind(false);
    await until(async () => (await app.getArq(started))!.state === "BOUND", "the started ARQ BOUND");
    await binder.idle();
    expect(allocated).toEqual([started]);
  });

  it("times a bind out from its start, or from the binder's start after a restart, with a reason", async () => {
    const { store, app, arqs } = await given([fpga("0c", 1)]);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // The binder's clock: its start is t0; each deadline check reads it.
    const t0 = Date.now() + 1000;
    const clock = { now: t0, reads: 0 };
    const now = () => (clock.reads++, clock.now);
    const failed: string[] = [];
    const failing = { allocateForArq: app.allocateForArq.bind(app), failBind: (...a: Parameters<Application["failBind"]>) => (failed.push(a[1]), app.failBind(...a)) };
    await startBinder({ store, app: failing, log: createLogger("silent"), bindTimeoutMs: 200, now, beforeAllocate: () => held });
    try {
      // A check a millisecond before the deadline (200 ms after the binder's start) fails nothing.
      clock.now = t0 + 199;
      const reads = clock.reads;
      await until(async () => clock.reads > reads, "a deadline check");
      expect(failed).toEqual([]);
      clock.now = t0 + 200;
      await until(async () => (await app.getArq(arqs[0]!.uuid))!.state === "BIND_FAILED", "BIND_FAILED");
      expect(failed).toEqual([arqs[0]!.uuid]);
      expect((await app.getArq(arqs[0]!.uuid))!.bindFailureReason).toMatch(/BIND_TIMEOUT_S/);
    } finally {
      release();
    }
    await binders[0]!.idle();
    // The late allocation finds the ARQ failed and takes nothing.
    expect((await app.getArq(arqs[0]!.uuid))!.state).toBe("BIND_FAILED");
  });

  it("fails a BOUND ARQ whose device leaves the host's report, once", async () => {
    const { store, app, arqs } = await given([fpga("0c", 1), fpga("0d", 1)]);
    await startBinder({ store, app, log: createLogger("silent"), bindTimeoutMs: 60_000 });
    await until(async () => (await app.getArq(arqs[0]!.uuid))!.state === "BOUND", "BOUND");
    await app.reportHostInventory(ctx(), "compute1", [fpga("0d", 1)]);
    await until(async () => (await app.getArq(arqs[0]!.uuid))!.state === "BIND_FAILED", "BIND_FAILED after the device was lost");
    expect((await app.getArq(arqs[0]!.uuid))!.bindFailureReason).toMatch(/left the host's inventory/);

    // Unbind it, then a new binder replays the whole log: the old loss must not fail anything again.
    // A live binder fails the lost ARQs it folded, and queues its binds, before start() resolves.
    await app.unbindArqs(ctx(), [arqs[0]!.uuid]);
    const before = await store.headPosition();
    const steps: string[] = [];
    const watched = {
      allocateForArq: (...a: Parameters<Application["allocateForArq"]>) => (steps.push(`allocate ${a[1]}`), app.allocateForArq(...a)),
      failBind: (...a: Parameters<Application["failBind"]>) => (steps.push(`fail ${a[1]}`), app.failBind(...a)),
    };
    const binder = await startBinder({ store, app: watched, log: createLogger("silent"), bindTimeoutMs: 60_000 });
    await binder.idle();
    expect(steps).toEqual([]);
    expect(await store.headPosition()).toBe(before);
  });
});
