/** Eviction notices on the ARQ's stream: who gets one, once, and when it goes away. */
import { describe, expect, it } from "vitest";
import { arqDecider, type ArqCommand } from "../../../src/domain/arqs/decider.js";
import type { ArqEvent } from "../../../src/domain/arqs/events.js";
import { arqView } from "../../../src/domain/arqs/view.js";
import { deciderSpec } from "../decider-spec.js";
import { ARQ, HISTORY, T1, at, later, unbound } from "./fixtures.js";

const spec = deciderSpec(arqDecider);
const deadline = "2026-03-01T10:10:00.000Z";
const request = (over: Partial<Extract<ArqCommand, { type: "RequestArqEviction" }>["data"]> = {}): ArqCommand => ({
  type: "RequestArqEviction",
  data: { arqUuid: ARQ, hostname: T1.hostname, deviceUuid: "dev-1", rpUuids: [T1.deviceRpUuid], taintKey: "cyborg.openstack.org/health", taintValue: "", reason: "XID 79", deadline, at: later, ...over },
});
const notice: ArqEvent = {
  type: "ArqEvictionRequested",
  data: { arqUuid: ARQ, instanceUuid: T1.instanceUuid, hostname: T1.hostname, deviceUuid: "dev-1", taintKey: "cyborg.openstack.org/health", reason: "XID 79", deadline, at: later },
};

describe("eviction notices", () => {
  it("a BOUND holder of the device is asked to move, with the deadline; the ARQ keeps its handle", () => {
    spec.given(HISTORY.BOUND).when(request()).then([notice]);
    const state = spec.given([...HISTORY.BOUND, notice]).state();
    if (state.status !== "live") throw new Error("expected a live ARQ");
    expect(state.arq).toMatchObject({ state: "BOUND", eviction: { deviceUuid: "dev-1", deadline, requestedAt: later } });
    expect(arqView(state.arq, 3, 9n)).toMatchObject({ attachHandleUuid: expect.any(String), eviction: { taintKey: "cyborg.openstack.org/health", reason: "XID 79" } });
  });

  it("a bind in progress on the device is asked too", () => {
    spec.given(HISTORY.BIND_STARTED).when(request()).then([notice]);
  });

  it("is given once per taint; another taint key gives another notice", () => {
    spec.given([...HISTORY.BOUND, notice]).when(request()).thenNothing();
    expect(spec.given([...HISTORY.BOUND, notice]).when(request({ taintKey: "cyborg.openstack.org/maintenance" })).events()).toHaveLength(1);
  });

  it("an ARQ that does not hold the device gets none: another provider, another host, released, failed or gone", () => {
    spec.given(HISTORY.BOUND).when(request({ rpUuids: ["rp-other"] })).thenNothing();
    spec.given(HISTORY.BOUND).when(request({ hostname: "compute9" })).thenNothing();
    spec.given(HISTORY.UNBOUND).when(request()).thenNothing();
    spec.given(HISTORY.BIND_FAILED).when(request()).thenNothing();
    spec.given(HISTORY.INITIAL).when(request()).thenNothing();
    spec.given([]).when(request()).thenNothing();
    spec.given([...HISTORY.BOUND, { type: "ArqDeleted", data: { arqUuid: ARQ, deviceProfileName: "dp1", deviceProfileUuid: "p", previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at } }])
      .when(request())
      .thenNothing();
  });

  it("a holder whose profile group tolerates the taint stays, as with Kubernetes' NoExecute tolerations", () => {
    const tolerant = { ...HISTORY.BOUND[0]!, data: { ...HISTORY.BOUND[0]!.data, group: { "resources:FPGA": "1", "accel:tolerations": "cyborg.openstack.org/health:NoExecute" } } } as ArqEvent;
    spec.given([tolerant, ...HISTORY.BOUND.slice(1)]).when(request()).thenNothing();
  });

  it("goes with the binding: unbound, the ARQ carries no notice", () => {
    const state = spec.given([...HISTORY.BOUND, notice, unbound]).state();
    expect(state.status === "live" && state.arq.eviction).toBe(null);
  });
});
