/** The REST layer's pure translation: microversions, JSON-patch reading, formats and shapes. */
import { describe, expect, it } from "vitest";
import { parseArqPatch, patchFieldOf } from "../../src/api/rest/arq-patch.js";
import { envelope, RestError } from "../../src/api/rest/errors.js";
import { pythonStrTime, wsmeTime } from "../../src/api/rest/format.js";
import { negotiate } from "../../src/api/rest/microversion.js";
import { arqShape, deployableShape, deviceShape } from "../../src/api/rest/shapes.js";

const U = "8e2a9a6c-6a4c-4c1e-9a59-2f6a1f1f0a01";
const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return [(err as RestError).status, (err as RestError).code];
  }
  return "no error";
};

describe("microversions", () => {
  it("reads the header forms Cyborg accepts", () => {
    expect(negotiate(undefined)).toBe(0);
    expect(negotiate("accelerator 2.2")).toBe(2);
    expect(negotiate("Accelerator 2.1")).toBe(1);
    expect(negotiate("accelerator latest")).toBe(3);
    expect(negotiate("latest")).toBe(3);
    expect(negotiate("2.3")).toBe(3);
    expect(negotiate("compute 2.90, accelerator 2.1")).toBe(1);
    expect(negotiate("compute 2.90")).toBe(0);
  });

  it("answers 406 for another major, a minor out of range or a value it cannot read", () => {
    for (const h of ["accelerator 3.0", "accelerator 1.9", "accelerator 2.4", "accelerator two", "accelerator 2"]) {
      expect(code(() => negotiate(h)), h).toEqual([406, "NOT_ACCEPTABLE"]);
    }
  });
});

describe("ARQ PATCH bodies", () => {
  const add = (path: string, value: unknown) => ({ op: "add", path, value });
  const bind = [add("/hostname", "h1"), add("/device_rp_uuid", "rp"), add("/instance_uuid", "vm")];

  it("reads a bind of several ARQs and an unbind", () => {
    expect(parseArqPatch({ a: bind, b: bind }, 0)).toEqual({
      kind: "bind",
      bindings: [
        { arqUuid: "a", hostname: "h1", deviceRpUuid: "rp", instanceUuid: "vm" },
        { arqUuid: "b", hostname: "h1", deviceRpUuid: "rp", instanceUuid: "vm" },
      ],
      projectId: undefined,
    });
    const remove = ["/hostname", "/instance_uuid", "/device_rp_uuid"].map((path) => ({ op: "remove", path }));
    expect(parseArqPatch({ a: remove }, 0)).toEqual({ kind: "unbind", arqUuids: ["a"] });
  });

  it("leaves a missing field to the bind command, which names it", () => {
    const p = parseArqPatch({ a: bind.slice(0, 2) }, 0);
    expect(p.kind === "bind" && p.bindings[0]!.instanceUuid).toBeUndefined();
  });

  it("names a bind's fields as the PATCH body does", () => {
    expect(patchFieldOf("bindings[1].deviceRpUuid", ["a", "b"])).toBe("b/device_rp_uuid");
    expect(patchFieldOf("bindings[0].hostname", ["a"])).toBe("a/hostname");
    expect(patchFieldOf("bindings[0].arqUuid", ["a"])).toBe("a");
    expect(patchFieldOf("arqUuids[0]", ["a"])).toBe("a");
    expect(patchFieldOf("projectId", ["a"])).toBe("project_id");
    expect(patchFieldOf("bindings[3].arqUuid", ["a"])).toBeUndefined();
    expect(patchFieldOf("somethingElse", ["a"])).toBeUndefined();
  });

  it("takes /project_id from 2.1 only", () => {
    const withProject = { a: [...bind, add("/project_id", "p9")] };
    expect(code(() => parseArqPatch(withProject, 0))).toEqual([406, "NOT_ACCEPTABLE"]);
    expect(parseArqPatch(withProject, 1)).toMatchObject({ kind: "bind", projectId: "p9" });
  });

  it("refuses what is not a Cyborg patch with 400", () => {
    const bad: unknown[] = [
      [],
      {},
      { a: [] },
      { a: "x" },
      { a: [{ path: "/hostname" }] },
      { a: [{ op: "replace", path: "/hostname", value: "h" }] },
      { a: [add("/hostname", "h"), { op: "remove", path: "/instance_uuid" }] },
      { a: [add("/state", "Bound")] },
      { a: [add("/hostname", "h"), add("/hostname", "h2")] },
      { a: bind, b: [{ op: "remove", path: "/hostname" }] },
    ];
    for (const body of bad) expect(code(() => parseArqPatch(body, 3)), JSON.stringify(body)).toEqual([400, "BAD_USER_INPUT"]);
  });
});

describe("formats and shapes", () => {
  it("writes WSME and Python str() timestamps", () => {
    expect(wsmeTime("2026-11-24T10:00:05.123Z")).toBe("2026-11-24T10:00:05+00:00");
    expect(wsmeTime(null)).toBeNull();
    expect(pythonStrTime("2026-11-24T10:00:05.123Z")).toBe("2026-11-24 10:00:05+00:00");
    expect(pythonStrTime(null)).toBe("None");
  });

  it("wraps errors in Cyborg's envelope", () => {
    const body = JSON.parse(envelope(new RestError("BAD_USER_INPUT", "no", "name")));
    expect(Object.keys(body)).toEqual(["error_message"]);
    expect(JSON.parse(body.error_message)).toEqual({ faultcode: "Client", faultstring: "no", debuginfo: null, code: "BAD_USER_INPUT", field: "name" });
    expect(JSON.parse(JSON.parse(envelope(new RestError("INTERNAL_SERVER_ERROR", "x"))).error_message).faultcode).toBe("Server");
  });

  const arq = {
    uuid: U,
    state: "BIND_FAILED" as const,
    deviceProfileName: "dp",
    deviceProfileGroupId: 0,
    hostname: "h",
    deviceRpUuid: "rp",
    instanceUuid: "vm",
    projectId: "p1",
    attachHandleType: "PCI" as const,
    attachHandleUuid: "hu",
    attachHandleInfo: { bus: "0c", function: 1 },
    bindFailureReason: "no free attach handle",
    createdAt: "2026-11-24T10:00:05.000Z",
    updatedAt: null,
  };

  it("shows attach-handle data only in Bound, its info as strings", () => {
    expect(arqShape(arq, "http://x")).toMatchObject({ state: "BindFailed", attach_handle_type: "", attach_handle_uuid: null, attach_handle_info: {}, bind_failure_reason: "no free attach handle" });
    const bound = arqShape({ ...arq, state: "BOUND" }, "http://x");
    expect(bound.bind_failure_reason).toBeNull();
    expect(bound).toMatchObject({ state: "Bound", attach_handle_type: "PCI", attach_handle_uuid: "hu", attach_handle_info: { bus: "0c", function: "1" } });
    expect(bound.links).toEqual([{ href: `http://x/accelerator/v2/accelerator_requests/${U}`, rel: "self" }]);
    expect(Object.keys(bound).sort()).toEqual(
      ["attach_handle_info", "attach_handle_type", "attach_handle_uuid", "bind_failure_reason", "created_at", "device_profile_group_id", "device_profile_name", "device_rp_uuid", "hostname", "instance_uuid", "links", "project_id", "state", "updated_at", "uuid"],
    );
  });

  it("writes attributes_list as Python's json.dumps does, with self and bookmark links", () => {
    const d = deployableShape(
      {
        uuid: U, name: "h_FakeDevice", numAccelerators: 4, driverName: "fake", rpUuid: "rp", bitstreamId: null, parentUuid: null, rootUuid: U,
        deviceUuid: "dev", hostname: "h", createdAt: "2026-11-24T10:00:05Z", updatedAt: null, resourceClass: "FPGA", traits: [],
        attributes: [{ uuid: "a1", key: "rc", value: "FPGA", parentUuid: null }, { uuid: "a2", key: "trait0", value: "CUSTOM_X", parentUuid: null }],
      },
      "http://x",
    );
    expect(d.attributes_list).toBe('[{"rc": "FPGA"}, {"trait0": "CUSTOM_X"}]');
    expect(JSON.parse(d.attributes_list)).toEqual([{ rc: "FPGA" }, { trait0: "CUSTOM_X" }]);
    expect(d).toMatchObject({ parent_id: null, root_id: null, device_id: "dev" });
    expect(d.links.map((l) => l.rel)).toEqual(["self", "bookmark"]);
    expect(d.links[1]!.href).toBe(`http://x/accelerator/deployables/${U}`);
  });

  it("shows a device's status from 2.3 only", () => {
    const dev = {
      uuid: U, type: "FPGA" as const, vendor: "0xABCD", model: "m", hostname: "h", status: "MAINTAINING" as const, stdBoardInfo: { a: "b" },
      vendorBoardInfo: null, controlPath: { uuid: "c", type: "PCI", info: {} }, createdAt: "2026-11-24T10:00:05Z", updatedAt: null, lost: false, taints: [],
    };
    const loop = { state: "TAINTED" as const, holders: [] };
    expect(deviceShape(dev, loop, "http://x", 2)).not.toHaveProperty("status");
    expect(deviceShape(dev, loop, "http://x", 3)).toMatchObject({ status: "maintaining", std_board_info: '{"a":"b"}', vendor_board_info: null });
  });

  it("keeps Cyborg's device fields, in Cyborg's order, and adds the health loop after them", () => {
    const taint = { key: "cyborg.openstack.org/maintenance", value: "", effect: "NoSchedule" as const, by: "cyborg-rest", reason: "disabled", at: "2026-11-24T10:00:06.000Z" };
    const dev = {
      uuid: U, type: "GPU" as const, vendor: "10de", model: "m", hostname: "h", status: "MAINTAINING" as const, stdBoardInfo: null, vendorBoardInfo: null,
      controlPath: { uuid: "c", type: "PCI", info: {} }, createdAt: "2026-11-24T10:00:05Z", updatedAt: null, lost: false, taints: [taint],
      health: { status: "WARNING" as const, reasons: [{ code: "AER_CORRECTABLE", message: "correctable PCIe errors", count: 3 }] },
    };
    const holders = [{ arqUuid: "a1", instanceUuid: "i1", since: "2026-11-24T10:00:01.000Z", eviction: null }];
    const shown = deviceShape(dev, { state: "DRAINING", holders }, "http://x", 3);
    expect(Object.keys(shown)).toEqual([
      "uuid", "type", "vendor", "model", "std_board_info", "vendor_board_info", "hostname", "status", "created_at", "updated_at", "links",
      "health", "state", "taints", "holders",
    ]);
    expect(shown).toMatchObject({
      health: { status: "WARNING", reasons: [{ code: "AER_CORRECTABLE", message: "correctable PCIe errors", count: 3 }] },
      state: "draining",
      taints: [taint],
      holders: [{ arq_uuid: "a1", instance_uuid: "i1", since: "2026-11-24T10:00:01.000Z", eviction: null }],
    });
    expect(deviceShape({ ...dev, health: undefined }, { state: "AVAILABLE", holders: [] }, "http://x", 0).health).toEqual({ status: "OK", reasons: [] });
  });
});
