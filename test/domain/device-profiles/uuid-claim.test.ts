import { describe, it } from "vitest";
import type { DeviceProfileUuidEvent } from "../../../src/domain/device-profiles/events.js";
import { uuidClaimDecider } from "../../../src/domain/device-profiles/uuid-claim.js";
import { deciderSpec } from "../decider-spec.js";

const spec = deciderSpec(uuidClaimDecider);
const uuid = "11111111-1111-4111-8111-111111111111";
const claimed = (name: string): DeviceProfileUuidEvent => ({ type: "DeviceProfileUuidClaimed", data: { uuid, name } });
const released = (name: string): DeviceProfileUuidEvent => ({ type: "DeviceProfileUuidReleased", data: { uuid, name } });

describe("device profile uuid claims", () => {
  it("claims a free uuid", () => {
    spec.given([]).when({ type: "ClaimDeviceProfileUuid", data: { uuid, name: "a" } }).then([claimed("a")]);
    spec.given([claimed("a"), released("a")]).when({ type: "ClaimDeviceProfileUuid", data: { uuid, name: "b" } }).then([claimed("b")]);
  });
  it("a claim by the same name is a no-op (a retried or failed creation)", () => {
    spec.given([claimed("a")]).when({ type: "ClaimDeviceProfileUuid", data: { uuid, name: "a" } }).thenNothing();
  });
  it("refuses a uuid held by another name with CONFLICT", () => {
    spec.given([claimed("a")]).when({ type: "ClaimDeviceProfileUuid", data: { uuid, name: "b" } }).thenThrows("CONFLICT", "uuid", /already exists \(a\)/);
  });
  it("takes over a claim the handler found stale", () => {
    spec
      .given([claimed("a")])
      .when({ type: "ClaimDeviceProfileUuid", data: { uuid, name: "b", staleHolder: "a" } })
      .then([released("a"), claimed("b")]);
  });
  it("confirms only its own claim", () => {
    spec.given([claimed("a")]).when({ type: "ConfirmDeviceProfileUuid", data: { uuid, name: "a" } }).then([claimed("a")]);
    spec.given([claimed("a"), released("a"), claimed("b")]).when({ type: "ConfirmDeviceProfileUuid", data: { uuid, name: "a" } }).thenThrows("CONFLICT", "uuid");
    spec.given([]).when({ type: "ConfirmDeviceProfileUuid", data: { uuid, name: "a" } }).thenThrows("CONFLICT", "uuid", /released/);
  });
  it("releases only its own claim", () => {
    spec.given([claimed("a")]).when({ type: "ReleaseDeviceProfileUuid", data: { uuid, name: "a" } }).then([released("a")]);
    spec.given([claimed("b")]).when({ type: "ReleaseDeviceProfileUuid", data: { uuid, name: "a" } }).thenNothing();
    spec.given([]).when({ type: "ReleaseDeviceProfileUuid", data: { uuid, name: "a" } }).thenNothing();
  });
});
