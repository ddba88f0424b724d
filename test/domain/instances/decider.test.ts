import { describe, expect, it } from "vitest";
import type { InstanceEvent } from "../../../src/domain/instances/events.js";
import { instanceDecider, isStaleFor } from "../../../src/domain/instances/decider.js";
import { arqDecider } from "../../../src/domain/arqs/decider.js";
import { bindStarted, created, HISTORY, T1, T2, unbound } from "../arqs/fixtures.js";
import { deciderSpec } from "../decider-spec.js";

const spec = deciderSpec(instanceDecider);
const at = "2026-03-01T10:00:00.000Z";
const vm = "vm-1";
const boundEv = (ids: string[]): InstanceEvent => ({ type: "InstanceArqsBound", data: { instanceUuid: vm, arqUuids: ids, at } });
const releasedEv = (ids: string[]): InstanceEvent => ({ type: "InstanceArqsReleased", data: { instanceUuid: vm, arqUuids: ids, at } });
const bind = (ids: string[]) => ({ type: "BindInstanceArqs" as const, data: { instanceUuid: vm, arqUuids: ids, at } });
const release = (ids: string[]) => ({ type: "ReleaseInstanceArqs" as const, data: { instanceUuid: vm, arqUuids: ids, at } });

describe("instance decider: an instance is bound once", () => {
  it("binds all the instance's ARQs at once", () => {
    spec.given([]).when(bind(["a", "b", "a"])).then([boundEv(["a", "b"])]);
  });
  it("refuses more ARQs while some are bound, with Cyborg's message", () => {
    spec.given([boundEv(["a"])]).when(bind(["b"])).thenThrows("CONFLICT", "instanceUuid", "Instance vm-1 already has accelerator requests. Cannot bind additional ARQs.");
    spec.given([boundEv(["a"])]).when(bind(["a", "b"])).thenThrows("CONFLICT", "instanceUuid");
  });
  it("a retried bind of the same ARQs is a no-op", () => {
    spec.given([boundEv(["a", "b"])]).when(bind(["b", "a"])).thenNothing();
  });
  it("binds again once every ARQ is released", () => {
    spec.given([boundEv(["a"]), releasedEv(["a"])]).when(bind(["b"])).then([boundEv(["b"])]);
    spec.given([boundEv(["a", "b"]), releasedEv(["a"])]).when(bind(["c"])).thenThrows("CONFLICT", "instanceUuid");
  });
  it("refuses an empty bind", () => {
    spec.given([]).when(bind([])).thenThrows("BAD_USER_INPUT", "bindings");
  });
  it("releases only ARQs it lists; idempotent", () => {
    spec.given([boundEv(["a", "b"])]).when(release(["b", "z"])).then([releasedEv(["b"])]);
    spec.given([boundEv(["a"]), releasedEv(["a"])]).when(release(["a"])).thenNothing();
  });

  it("releases the listed ARQs it is told are stale, then binds", () => {
    spec.given([boundEv(["a"])]).when({ ...bind(["b"]), data: { ...bind(["b"]).data, stale: ["a"] } }).then([releasedEv(["a"]), boundEv(["b"])]);
    // Only listed ARQs are released, never one of this bind's own; one that is not stale still refuses.
    spec.given([boundEv(["a", "c"])]).when({ ...bind(["b"]), data: { ...bind(["b"]).data, stale: ["a", "b", "x"] } }).thenThrows("CONFLICT", "instanceUuid");
  });
  it("an ARQ is stale for an instance once it is deleted or bound to another instance", () => {
    const state = (events: Parameters<typeof arqDecider.evolve>[1][]) => events.reduce(arqDecider.evolve, arqDecider.initialState());
    expect(isStaleFor(T1.instanceUuid, state(HISTORY.BOUND))).toBe(false);
    expect(isStaleFor(T1.instanceUuid, state(HISTORY.INITIAL))).toBe(false);
    expect(isStaleFor(T1.instanceUuid, state([created, bindStarted(T1), unbound, bindStarted(T2)]))).toBe(true);
    expect(isStaleFor(T1.instanceUuid, arqDecider.initialState())).toBe(true);
  });
});
