/**
 * The invariant checker leaves a decision in flight alone for its grace period, repairs what is
 * still wrong after it, reports each repair, and names the committed prefix of an interrupted
 * sequence (appendStepByStep) so the undo knows what to undo.
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import type { Repair } from "../../src/app/arqs/index.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { appendStepByStep, SequenceInterruptedError } from "../../src/infra/eventstore/port.js";
import { createLogger } from "../../src/infra/logger.js";
import { InvariantChecker } from "../../src/reactors/invariants/checker.js";
import { toNewEvent } from "../../src/app/handle.js";
import { ADMIN, ctx, fpga, hostState } from "../app/support.js";
import { gate, StepByStepStore, TransportError } from "./step-store.js";

const HOST = "compute1";
const RP = rpUuidFor(`${HOST}_0000:af:00.0`);
const GRACE = 10_000;

async function world() {
  const log = new MemoryEventStore();
  const store = new StepByStepStore(log);
  const app = new Application({ store });
  await app.reportHostInventory({ ...ADMIN, principal: "agent:compute1" }, HOST, [fpga(HOST, "af", 1)]);
  await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
  const [arq] = await app.createArqs(ctx(), { deviceProfileName: "dp1" });
  let t = 1_000_000;
  const repairs: Repair[] = [];
  // The checker's process appends directly (the writer under test may be stopped).
  const checker = new InvariantChecker({ store: log, app: new Application({ store: log }), log: createLogger("silent"), graceMs: GRACE, now: () => t, onRepair: (r) => repairs.push(r) });
  await checker.start();
  const settled = async () => checker.caughtUp((await log.headPosition())!);
  return { log, store, app, checker, repairs, settled, arqUuid: arq!.uuid, later: (ms: number) => (t += ms) };
}

describe("the invariant checker", () => {
  it("leaves a bind whose host step is appended and ARQ step not yet alone, and finds nothing once it completes", async () => {
    const w = await world();
    const g = gate();
    w.store.before = async (s) => (s === stream.arq(w.arqUuid) ? g.wait() : undefined);
    const binding = w.app.startBinds(ctx(), [{ arqUuid: w.arqUuid, hostname: HOST, deviceRpUuid: RP, instanceUuid: "vm-1" }], { allocate: true });
    await g.reached;
    await w.settled();
    // The allocation's ARQ is not binding yet: a violation as the log stands, but within its grace period.
    expect(w.checker.violations).toBe(1);
    w.later(GRACE - 1);
    expect(await w.checker.checkDue()).toEqual([]);
    g.open();
    expect((await binding)[0]!.state).toBe("BOUND");
    await w.settled();
    expect(w.checker.violations).toBe(0);
    w.later(GRACE);
    expect(await w.checker.checkDue()).toEqual([]);
    expect((await hostState(w.log, HOST)).allocations.get(w.arqUuid)).toBeDefined();
    await w.checker.stop();
  });

  it("after the grace period, releases a quota claim whose ARQ was never created (a creation that stopped after its claim), and leaves a live ARQ's claim", async () => {
    const w = await world();
    const orphan = "0b7c6f2e-3a1d-4e5f-9a8b-7c6d5e4f3a21";
    const claimed = { type: "QuotaClaimed", data: { projectId: "p1", claims: [{ arqUuid: orphan, amounts: { FPGA: 1, ARQS: 1 } }, { arqUuid: w.arqUuid, amounts: { FPGA: 1, ARQS: 1 } }], at: "2026-03-01T10:00:00.000Z" } };
    await w.log.append(stream.quota("p1"), [toNewEvent(claimed, ctx())], "no_stream");
    await w.settled();
    expect(w.checker.violations).toBe(1);
    w.later(GRACE - 1);
    expect(await w.checker.checkDue()).toEqual([]);
    w.later(1);
    expect(await w.checker.checkDue()).toEqual([{ arqUuid: orphan, violation: "orphaned-claim", action: "released", projectId: "p1" }]);
    const quota = await w.app.projectQuota("p1");
    expect(quota.claims).toBe(1);
    expect(quota.classes).toContainEqual(expect.objectContaining({ resourceClass: "FPGA", usage: 1 }));
    await w.settled();
    expect(w.checker.violations).toBe(0);
    await w.checker.stop();
  });

  it("after the grace period, releases a handle an unbind stopped before freeing, and reports it", async () => {
    const w = await world();
    await w.app.startBinds(ctx(), [{ arqUuid: w.arqUuid, hostname: HOST, deviceRpUuid: RP, instanceUuid: "vm-1" }], { allocate: true });
    w.store.arm(1, "crash-after");
    await expect(w.app.unbindArqs(ctx(), [w.arqUuid])).rejects.toBeInstanceOf(TransportError);
    await w.settled();
    expect(w.checker.violations).toBe(1);
    expect(await w.checker.checkDue()).toEqual([]);
    w.later(GRACE);
    const done = await w.checker.checkDue();
    expect(done).toEqual([{ arqUuid: w.arqUuid, violation: "orphaned-allocation", action: "released", hostname: HOST }]);
    expect(w.repairs).toEqual(done);
    expect((await hostState(w.log, HOST)).allocations.size).toBe(0);
    // Idempotent: checked again, nothing is left to do.
    await w.settled();
    expect(await w.checker.checkDue(true)).toEqual([]);
    await w.checker.stop();
  });
});

describe("appendStepByStep", () => {
  const ev = (type: string) => ({ id: crypto.randomUUID(), type, data: {}, metadata: { principal: "p", correlationId: "c", causationId: "c", at: "2026-01-01T00:00:00.000Z" } });

  it("names the committed prefix when a later step fails with a transport error", async () => {
    const log = new MemoryEventStore();
    const flaky = { append: async (s: string, events: ReturnType<typeof ev>[], expected: "no_stream") => (s === "c" ? Promise.reject(new TransportError("c")) : log.append(s, events, expected)) };
    const err = await appendStepByStep(flaky, [
      { stream: "a", events: [ev("A")], expectedRevision: "no_stream" },
      { stream: "b", events: [ev("B")], expectedRevision: "no_stream" },
      { stream: "c", events: [ev("C")], expectedRevision: "no_stream" },
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SequenceInterruptedError);
    expect((err as SequenceInterruptedError).appended.map((r) => r.revision)).toEqual([0, 0]);
    expect((err as SequenceInterruptedError).cause).toBeInstanceOf(TransportError);
  });

  it("rejects with the error itself when nothing was committed", async () => {
    const failing = { append: () => Promise.reject(new TransportError("a")) };
    await expect(appendStepByStep(failing, [{ stream: "a", events: [ev("A")], expectedRevision: "no_stream" }])).rejects.toBeInstanceOf(TransportError);
  });
});
