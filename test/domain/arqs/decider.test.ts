import { describe, expect, it } from "vitest";
import { arqDecider, type ArqCommand } from "../../../src/domain/arqs/decider.js";
import { deciderSpec } from "../decider-spec.js";
import { ARQ, at, bindStarted, bound, commands, created, failed, HANDLE, HISTORY, later, PROFILE, T1, T2, unbound } from "./fixtures.js";

const spec = deciderSpec(arqDecider);
const create: ArqCommand = {
  type: "CreateArq",
  data: { arqUuid: ARQ, deviceProfileName: "dp1", deviceProfileUuid: PROFILE, deviceProfileGroupId: 0, group: { "resources:FPGA": "1" }, projectId: "p1", at },
};

describe("ARQ decider", () => {
  describe("create", () => {
    it("creates an INITIAL ARQ with its group, project and profile", () => {
      spec.given([]).when(create).then([created]);
      expect(spec.given([created]).state()).toMatchObject({ status: "live", arq: { state: "INITIAL", projectId: "p1", deviceProfileGroupId: 0, updatedAt: null } });
    });
    it("refuses a uuid that exists", () => {
      spec.given([created]).when(create).thenThrows("CONFLICT", "arqUuid");
    });
  });

  describe("bind", () => {
    it("records host, RP, instance and the ARQ's project", () => {
      spec.given([created]).when(commands.startBind(T1)).then([bindStarted(T1, later)]);
    });
    it("keeps the ARQ's project; takes the caller's only when the ARQ has none", () => {
      const withProject: ArqCommand = { type: "StartArqBind", data: { arqUuid: ARQ, ...T1, projectId: "other", at } };
      spec.given([created]).when(withProject).then([bindStarted(T1)]);
      const noProject = { ...created, data: { ...created.data, projectId: null } } as typeof created;
      expect(spec.given([noProject]).when(withProject).events()).toMatchObject([{ data: { projectId: "other" } }]);
    });
    it("requires hostname, device RP uuid and instance uuid", () => {
      for (const field of ["hostname", "deviceRpUuid", "instanceUuid"] as const) {
        const cmd = commands.startBind({ ...T1, [field]: "" });
        spec.given([created]).when(cmd).thenThrows("BAD_USER_INPUT", field, /Fields absent in patch/);
      }
    });
    it("a retried bind with the same target is a no-op in BIND_STARTED and BOUND", () => {
      spec.given(HISTORY.BIND_STARTED).when(commands.startBind(T1)).thenNothing();
      spec.given(HISTORY.BOUND).when(commands.startBind(T1)).thenNothing();
    });
    it("re-binds an UNBOUND ARQ elsewhere", () => {
      spec.given(HISTORY.UNBOUND).when(commands.startBind(T2)).then([{ type: "ArqBindStarted", data: { arqUuid: ARQ, ...T2, projectId: "p1", at: later } }]);
    });
  });

  describe("complete", () => {
    it("records the handle", () => {
      spec.given(HISTORY.BIND_STARTED).when(commands.complete()).then([{ ...bound(), data: { ...bound().data, at: later } } as never]);
    });
    it("refuses a handle allocated for a binding the ARQ no longer has", () => {
      spec.given([created, bindStarted(T1), unbound, bindStarted(T2)]).when(commands.complete(T1)).thenThrows("CONFLICT", "arqUuid", /another host/);
    });
    it("refuses another handle once BOUND", () => {
      spec.given(HISTORY.BOUND).when(commands.complete(T1, { ...HANDLE, handleUuid: "h-2" })).thenThrows("CONFLICT", "arqUuid");
    });
  });

  describe("fail", () => {
    it("records the reason", () => {
      spec.given(HISTORY.BIND_STARTED).when(commands.fail("timeout")).then([
        { type: "ArqBindFailed", data: { arqUuid: ARQ, instanceUuid: T1.instanceUuid, reason: "timeout", at: later } },
      ]);
    });
    it("onlyFrom makes it conditional: nothing from another state", () => {
      spec.given(HISTORY.BOUND).when(commands.fail("x", ["BIND_STARTED"])).thenNothing();
      spec.given(HISTORY.INITIAL).when(commands.fail("x", ["BIND_STARTED"])).thenNothing();
      expect(spec.given(HISTORY.BOUND).when(commands.fail("lost", ["BIND_STARTED", "BOUND"])).events()).toHaveLength(1);
    });
    it("keeps host and instance (as Cyborg) and the handle recorded when failing a BOUND ARQ", () => {
      const s = spec.given([...HISTORY.BOUND, failed("device lost")]).state();
      expect(s).toMatchObject({ status: "live", arq: { state: "BIND_FAILED", hostname: T1.hostname, instanceUuid: T1.instanceUuid, bindFailureReason: "device lost" } });
      expect(s.status === "live" && s.arq.attachment?.handleUuid).toBe(HANDLE.handleUuid);
    });
  });

  describe("unbind", () => {
    it("records what the ARQ held and clears host, RP, instance and handle", () => {
      spec.given(HISTORY.BOUND).when(commands.unbind()).then([{ ...unbound, data: { ...unbound.data, at: later } } as never]);
      const s = spec.given(HISTORY.UNBOUND).state();
      expect(s).toMatchObject({ arq: { state: "UNBOUND", hostname: null, deviceRpUuid: null, instanceUuid: null, attachment: null, projectId: "p1" } });
    });
    it("from BIND_STARTED holds no handle yet", () => {
      expect(spec.given(HISTORY.BIND_STARTED).when(commands.unbind()).events()).toMatchObject([
        { data: { previousHostname: T1.hostname, previousInstanceUuid: T1.instanceUuid, releasedHandleUuid: null } },
      ]);
    });
  });

  describe("delete", () => {
    it("records profile, host, instance and handle it held", () => {
      spec.given(HISTORY.BOUND).when(commands.delete()).then([
        {
          type: "ArqDeleted",
          data: {
            arqUuid: ARQ,
            deviceProfileName: "dp1",
            deviceProfileUuid: PROFILE,
            previousHostname: T1.hostname,
            previousInstanceUuid: T1.instanceUuid,
            releasedHandleUuid: HANDLE.handleUuid,
            at: later,
          },
        },
      ]);
    });
    it("deleting a deleted ARQ is a no-op; anything else on it is NOT_FOUND", () => {
      const gone = [...HISTORY.INITIAL, { type: "ArqDeleted", data: { arqUuid: ARQ, deviceProfileName: "dp1", deviceProfileUuid: PROFILE, previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at } } as const];
      spec.given(gone).when(commands.delete()).thenNothing();
      spec.given(gone).when(commands.startBind()).thenThrows("NOT_FOUND", "arqUuid");
      spec.given(gone).when(commands.unbind()).thenThrows("NOT_FOUND", "arqUuid");
    });
    it("commands on an unknown ARQ are NOT_FOUND", () => {
      for (const c of [commands.startBind(), commands.complete(), commands.fail(), commands.unbind(), commands.delete()]) {
        spec.given([]).when(c).thenThrows("NOT_FOUND", "arqUuid");
      }
    });
  });
});
