/**
 * The binder's and the invariant checker's folds kept across a restart (state-snapshots.ts): a
 * restart loads them and reads only the log after their checkpoint; a snapshot that is another
 * log's, torn or of another version is refused with a log line, and the whole log is read.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Application } from "../../src/app/application.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import { StateSnapshots } from "../../src/reactors/follower/state-snapshots.js";
import { InvariantChecker } from "../../src/reactors/invariants/checker.js";
import { append, arqCreated } from "../projections/support.js";
import { capturingLogger } from "../support/log-lines.js";

const ctx = (): CommandContext => ({ principal: "test", correlationId: randomUUID(), causationId: randomUUID(), at: new Date().toISOString(), projectId: "p1", isAdmin: true });
const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cyborg-es-state-"));
  dirs.push(d);
  return d;
};

const fpga: DriverDevice = {
  type: "FPGA",
  vendor: "0xABCD",
  model: "test",
  controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
  deployables: [{ name: "compute1_0c", numAccelerators: 1, driverName: "fake", attributes: [{ key: "rc", value: "FPGA" }], attachHandles: [{ type: "TEST_PCI", info: { domain: "0000", bus: "0c", device: "00", function: "1" } }] }],
};

/** A host and two ARQs in BIND_STARTED (no binder ran). */
async function bindsInFlight() {
  const store = new MemoryEventStore();
  const app = new Application({ store });
  await app.reportHostInventory(ctx(), "compute1", [fpga]);
  await app.createDeviceProfile(ctx(), { name: "one", groups: [{ "resources:FPGA": "1" }] });
  const arqs: string[] = [];
  for (let i = 0; i < 2; i++) {
    const [arq] = await app.createArqs(ctx(), { deviceProfileName: "one" });
    await app.startBinds(ctx(), [{ arqUuid: arq!.uuid, hostname: "compute1", deviceRpUuid: rpUuidFor("compute1_0c"), instanceUuid: randomUUID() }]);
    arqs.push(arq!.uuid);
  }
  return { store, app, arqs };
}

function snapshotsIn(dir: string, events: MemoryEventStore) {
  const captured = capturingLogger("info");
  return { snapshots: new StateSnapshots({ dir, events, log: captured.log, intervalMs: 0 }), ...captured };
}

/** An application on which every bind waits: the binds stay in flight while a binder runs on it. */
const waiting = { allocateForArq: async () => ({ ok: false, waiting: true }), failBind: async () => undefined } as never;

/** Where each subscription to the log started (undefined: its start). */
function subscriptionsOf(store: MemoryEventStore) {
  const spy = vi.spyOn(store, "subscribeToAll");
  return () => spy.mock.calls.map(([o]) => o?.after);
}

describe("the binder's fold across a restart", () => {
  it("is loaded from its snapshot: the binder reads the log after it, and finishes the binds the snapshot holds", async () => {
    const dir = tempDir();
    const { store, app, arqs } = await bindsInFlight();
    const held = new Binder({ store, app: waiting, log: capturingLogger().log, bindTimeoutMs: 60_000, snapshots: snapshotsIn(dir, store).snapshots });
    await held.start();
    expect(held.bindsInFlight).toBe(2);
    await held.stop();
    const head = await store.headPosition();

    const after = subscriptionsOf(store);
    const s = snapshotsIn(dir, store);
    const binder = new Binder({ store, app, log: capturingLogger().log, bindTimeoutMs: 60_000, snapshots: s.snapshots });
    await binder.start();
    expect(after()).toEqual([head]);
    expect(s.said("state loaded from its snapshot; reading the log after it", { follower: "binder" })).toHaveLength(1);
    await binder.idle();
    expect((await Promise.all(arqs.map((a) => app.getArq(a)))).map((a) => a!.state).sort()).toEqual(["BIND_FAILED", "BOUND"]);
    await binder.stop();
  });

  it("refuses another log's, a torn one, and one of another version with a log line, and folds the whole log", async () => {
    const dir = tempDir();
    const other = await bindsInFlight();
    const first = new Binder({ store: other.store, app: waiting, log: capturingLogger().log, bindTimeoutMs: 60_000, snapshots: snapshotsIn(dir, other.store).snapshots });
    await first.start();
    await first.stop();

    const { store } = await bindsInFlight();
    const refusedWith = async () => {
      const after = subscriptionsOf(store);
      const s = snapshotsIn(dir, store);
      const binder = new Binder({ store, app: waiting, log: capturingLogger().log, bindTimeoutMs: 60_000, snapshots: s.snapshots });
      await binder.start();
      expect(after()).toEqual([undefined]);
      expect(binder.bindsInFlight).toBe(2);
      await binder.stop();
      vi.restoreAllMocks();
      return s.lines.filter((l) => /state snapshot is refused/.test(l.msg)).map((l) => l.reason);
    };
    expect(await refusedWith()).toEqual([expect.stringMatching(/^it is not this log's: it was built from the log whose first event is/)]);
    // The refused binder wrote this log's at stop; torn, it is refused again.
    truncateSync(join(dir, "binder.state"), 40);
    expect(await refusedWith()).toEqual([expect.stringMatching(/^it is torn/)]);
    const older = new StateSnapshots({ dir, events: store, log: capturingLogger().log, intervalMs: 0 });
    await older.save("binder", 0, { position: (await store.headPosition())!, id: (await store.readAll()).at(-1)!.id }, []);
    expect(await refusedWith()).toEqual([expect.stringMatching(/written by a build whose binder code differs/)]);
  });
});

describe("the invariant checker's index across a restart", () => {
  it("is loaded from its snapshot: the ARQs in violation are known at once, and the log is read after it", async () => {
    const dir = tempDir();
    const store = new MemoryEventStore();
    const app = new Application({ store });
    await append(store, [arqCreated("arq-unrecorded")]); // created, never recorded by its profile
    const first = new InvariantChecker({ store, app, log: capturingLogger().log, graceMs: 60_000, snapshots: snapshotsIn(dir, store).snapshots });
    await first.start();
    expect(first.violations).toBe(1);
    await first.stop();

    const after = subscriptionsOf(store);
    const s = snapshotsIn(dir, store);
    const checker = new InvariantChecker({ store, app, log: capturingLogger().log, graceMs: 60_000, snapshots: s.snapshots });
    await checker.start();
    expect(after()).toEqual([await store.headPosition()]);
    expect(checker.violations).toBe(1);
    expect(s.said("state loaded from its snapshot; reading the log after it", { follower: "invariant-checker" })).toHaveLength(1);
    await checker.stop();
  });
});
