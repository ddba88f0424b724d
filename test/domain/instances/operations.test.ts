import { describe, expect, it } from "vitest";
import { instanceDecider } from "../../../src/domain/instances/decider.js";
import type { InstanceEvent } from "../../../src/domain/instances/events.js";
import { INSTANCE_OPERATIONS, operationEffect } from "../../../src/domain/instances/operations.js";
import { deciderSpec, expectDomainError } from "../decider-spec.js";

const spec = deciderSpec(instanceDecider);
const at = "2026-03-01T10:00:00.000Z";
const record = (operation: string, instanceUuid = "vm-1") => ({ type: "RecordInstanceOperation" as const, data: { instanceUuid, operation, at } });
const bound: InstanceEvent = { type: "InstanceArqsBound", data: { instanceUuid: "vm-1", arqUuids: ["a"], at } };

describe("instance operations (seed: OpenStack Server API Behavior)", () => {
  it("has the seed's table: what keeps, releases, moves or plugs again", () => {
    const byEffect = (effect: string) => Object.keys(INSTANCE_OPERATIONS).filter((op) => INSTANCE_OPERATIONS[op] === effect).sort();
    expect(byEffect("keep")).toEqual(["lock", "pause", "reboot", "rebuild", "resume", "set-password", "suspend", "trigger-crash-dump", "unlock", "unpause"]);
    expect(byEffect("release")).toEqual(["delete", "shelve", "stop"]);
    expect(byEffect("move")).toEqual(["cold-migrate", "evacuate", "resize"]);
    expect(byEffect("plug")).toEqual(["restore", "start", "unshelve"]);
  });
  it("records an operation with its effect, and changes nothing else of the instance", () => {
    spec.given([bound]).when(record("shelve")).then([{ type: "InstanceOperationRecorded", data: { instanceUuid: "vm-1", operation: "shelve", effect: "release", at } }]);
    expect(spec.given([bound]).when(record("reboot")).state()).toEqual({ arqUuids: ["a"] });
    spec.given([bound]).when(record("stop")).then([{ type: "InstanceOperationRecorded", data: { instanceUuid: "vm-1", operation: "stop", effect: "release", at } }]);
    spec.given([]).when(record("start")).then([{ type: "InstanceOperationRecorded", data: { instanceUuid: "vm-1", operation: "start", effect: "plug", at } }]);
  });
  it("refuses live migration and boot from snapshot with UNSUPPORTED_OPERATION, an unknown operation with BAD_USER_INPUT", () => {
    spec.given([bound]).when(record("live-migrate")).thenThrows("UNSUPPORTED_OPERATION", "operation", /live migration is not supported/);
    spec.given([]).when(record("boot-from-snapshot")).thenThrows("UNSUPPORTED_OPERATION", "operation");
    spec.given([]).when(record("teleport")).thenThrows("BAD_USER_INPUT", "operation", /unknown instance operation "teleport"; one of pause/);
    expectDomainError(() => operationEffect(42), "BAD_USER_INPUT", "operation");
    expectDomainError(() => operationEffect("toString"), "BAD_USER_INPUT", "operation");
  });
  it("needs an instance uuid", () => {
    spec.given([]).when(record("pause", "")).thenThrows("BAD_USER_INPUT", "instanceUuid");
  });
});
