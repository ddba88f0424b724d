/**
 * Two processes sharing one log (each its own Application: its own cache and stream locks), their
 * sequences appended step by step as on EventStoreDB, one held between two steps while the other
 * decides: no interleaving frees a handle an ARQ holds.
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { loadAggregate } from "../../src/app/handle.js";
import { instanceDecider } from "../../src/domain/instances/decider.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { ADMIN, ctx, fpga, hostState, types } from "../app/support.js";
import { gate, StepByStepStore } from "./step-store.js";

const HOST = "compute1";
const RP = rpUuidFor(`${HOST}_0000:af:00.0`);
const binderCtx = { principal: "system:binder", correlationId: "b", causationId: "b", at: "2026-03-01T10:02:00.000Z" };

/** A shared log with one host of one handle, one ARQ in BIND_STARTED, and two processes on it. */
async function twoProcesses() {
  const log = new MemoryEventStore();
  let n = 0;
  const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
  const apiStore = new StepByStepStore(log);
  const binderStore = new StepByStepStore(log);
  const api = new Application({ store: apiStore, newId });
  const binder = new Application({ store: binderStore, newId });
  await api.reportHostInventory({ ...ADMIN, principal: "agent:compute1" }, HOST, [fpga(HOST, "af", 1)]);
  await api.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
  const [arq] = await api.createArqs(ctx(), { deviceProfileName: "dp1" });
  const binding = { arqUuid: arq!.uuid, hostname: HOST, deviceRpUuid: RP, instanceUuid: "vm-1" };
  await api.startBinds(ctx(), [binding]);
  return { log, api, binder, binderStore, binding, arqUuid: arq!.uuid };
}

/** Holds the store's `nth` next append to `streamName` (to any stream: null) at a gate. */
function holdBefore(store: StepByStepStore, streamName: string | null, nth = 1) {
  const g = gate();
  let seen = 0;
  store.before = async (s) => {
    if ((streamName !== null && s !== streamName) || ++seen !== nth) return;
    await g.wait();
  };
  return g;
}

describe("two processes on one log", () => {
  it("the binder's undo keeps the handle an API replica bound the ARQ with while the binder's ARQ step waited", async () => {
    const { log, api, binder, binderStore, binding, arqUuid } = await twoProcesses();
    // The binder's host step commits; it is held before its ARQ step.
    const g = holdBefore(binderStore, stream.arq(arqUuid));
    const binding$ = binder.allocateForArq(binderCtx, arqUuid);
    await g.reached;
    expect((await hostState(log, HOST)).allocations.get(arqUuid)).toBeDefined();
    // The API replica completes the same bind with that allocation.
    const [bound] = await api.startBinds(ctx(), [binding], { allocate: true });
    expect(bound!.state).toBe("BOUND");
    // The binder's ARQ step is refused; it finds the ARQ bound and lets go without freeing the handle.
    g.open();
    expect(await binding$).toMatchObject({ ok: false });
    const held = (await hostState(log, HOST)).allocations.get(arqUuid);
    expect(held?.handleUuid).toBe(bound!.attachHandleUuid);
    expect(await types(log, stream.host(HOST))).not.toContain("AttachHandleReleased");
    expect((await api.getArq(arqUuid))!.state).toBe("BOUND");
  });

  it("a late release keeps the handle of an ARQ another process bound again meanwhile", async () => {
    const { log, api, binder, binderStore, binding, arqUuid } = await twoProcesses();
    expect(await binder.allocateForArq(binderCtx, arqUuid)).toMatchObject({ ok: true });
    // One process unbinds: its ARQ step commits; it is held before its host step.
    const g = holdBefore(binderStore, stream.host(HOST));
    const unbinding = binder.unbindArqs(ctx(), [arqUuid]);
    await g.reached;
    expect((await api.getArq(arqUuid))!.state).toBe("UNBOUND");
    // The other binds the same ARQ to the same target again, before the handle is freed.
    const [bound] = await api.startBinds(ctx(), [binding], { allocate: true });
    expect(bound!.state).toBe("BOUND");
    // The late release lets go of nothing the new binding holds.
    g.open();
    await unbinding;
    const held = (await hostState(log, HOST)).allocations.get(arqUuid);
    expect(held?.handleUuid).toBe(bound!.attachHandleUuid);
    const arq = (await api.getArq(arqUuid))!;
    expect(arq.state).toBe("BOUND");
    expect(arq.attachHandleUuid).toBe(bound!.attachHandleUuid);
    // And the instance still lists it (a delete by instance finds it).
    expect((await loadAggregate(log, stream.instance(binding.instanceUuid), instanceDecider)).state.arqUuids).toContain(arqUuid);
  });

  it("a late release keeps the handle of an ARQ another process started binding and the binder completed meanwhile", async () => {
    const { log, api, binder, binderStore, binding, arqUuid } = await twoProcesses();
    expect(await binder.allocateForArq(binderCtx, arqUuid)).toMatchObject({ ok: true });
    // One process unbinds: its ARQ step commits; it is held before its next append.
    const g = holdBefore(binderStore, null, 2);
    const unbinding = binder.unbindArqs(ctx(), [arqUuid]);
    await g.reached;
    expect((await api.getArq(arqUuid))!.state).toBe("UNBOUND");
    // The other starts the same bind without allocating, and completes it as the binder does.
    await api.startBinds(ctx(), [binding]);
    const completed = await api.allocateForArq(binderCtx, arqUuid);
    expect(completed).toMatchObject({ ok: true });
    const bound = completed.ok ? completed.arq : null;
    g.open();
    await unbinding;
    expect((await hostState(log, HOST)).allocations.get(arqUuid)?.handleUuid).toBe(bound!.attachHandleUuid);
    expect((await api.getArq(arqUuid))!.state).toBe("BOUND");
  });
});
