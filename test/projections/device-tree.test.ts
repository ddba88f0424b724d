import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../src/domain/events.js";
import { allocated, attribute, deployable, device, given, gpuHost, handle, released, T } from "./support.js";

const fpgaHost: DomainEvent[] = [
  device("h2", "f1", { type: "FPGA", vendor: "8086", bus: "5e" }),
  deployable("h2", "f1", "region", { name: "h2_region", num: 2 }),
  deployable("h2", "f1", "fn-a", { name: "h2_fn_a", parent: "region", root: "region" }),
  deployable("h2", "f1", "fn-b", { name: "h2_fn_b", parent: "region", root: "region" }),
  attribute("h2", "region", "r-rc", "rc", "FPGA"),
  handle("h2", "f1", "fn-a", "ha", "5e"),
  handle("h2", "f1", "fn-a", "hb", "5f"),
];

describe("device-tree projection", () => {
  it("shows a host's devices, deployables with their attributes, and attach handles", async () => {
    const { read } = await given([...gpuHost("h1"), ...fpgaHost]);

    expect(await read.getDevices(["d1", "nope"])).toEqual([
      {
        uuid: "d1",
        type: "GPU",
        vendor: "10de",
        model: "model-x",
        hostname: "h1",
        status: "ENABLED",
        stdBoardInfo: { class: "0302" },
        vendorBoardInfo: null,
        controlPath: { uuid: "cp-d1", type: "PCI", info: { domain: "0000", bus: "af", device: "00", function: "0" } },
        additionalControlPaths: [],
        createdAt: T(1),
        updatedAt: null,
        lost: false,
        health: { status: "OK", reasons: [] },
        topology: null,
        taints: [],
        cleaningRequired: false,
        cleaningInFlight: null,
        qualifyingSince: null,
        failure: null,
        lastCleaning: null,
      },
      null,
    ]);

    const [p1] = await read.getDeployables(["p1"]);
    expect(p1).toMatchObject({
      uuid: "p1",
      name: "h1_0000:af:00.0",
      numAccelerators: 1,
      driverName: "drv",
      rpUuid: "rp-p1",
      bitstreamId: null,
      parentUuid: null,
      rootUuid: "p1",
      deviceUuid: "d1",
      hostname: "h1",
      resourceClass: "PGPU",
      traits: ["CUSTOM_GPU_NVIDIA", "CUSTOM_GPU_PRODUCT_ID_1EB8"],
    });
    expect(p1!.attributes).toEqual([
      { uuid: "a1-rc", key: "rc", value: "PGPU", parentUuid: null },
      { uuid: "a1-t0", key: "trait0", value: "CUSTOM_GPU_NVIDIA", parentUuid: null },
      { uuid: "a1-t1", key: "trait1", value: "CUSTOM_GPU_PRODUCT_ID_1EB8", parentUuid: null },
    ]);

    const byDevice = await read.deployablesByDevice(["f1", "d1", "none"]);
    expect(byDevice.map((l) => l.map((d) => d.uuid))).toEqual([["region", "fn-a", "fn-b"], ["p1"], []]);
    expect((await read.childrenOf(["region", "fn-a"])).map((l) => l.map((d) => d.uuid))).toEqual([["fn-a", "fn-b"], []]);
    const handles = await read.handlesByDeployable(["fn-a", "p1", "region"]);
    expect(handles.map((l) => l.map((h) => h.uuid))).toEqual([["ha", "hb"], ["h1"], []]);
    expect(handles[1]![0]).toEqual({
      uuid: "h1",
      type: "PCI",
      info: { domain: "0000", bus: "af", device: "00", function: "0" },
      inUse: false,
      arqUuid: null,
      deployableUuid: "p1",
      deviceUuid: "d1",
      hostname: "h1",
      lost: false,
    });
    expect((await read.getHandles(["hb", "zz"])).map((h) => h?.uuid ?? null)).toEqual(["hb", null]);
  });

  it("lists devices in discovery order, filtered and paged, with totalCount", async () => {
    const { read } = await given([
      ...gpuHost("h1", "1"),
      ...fpgaHost,
      ...gpuHost("h1", "2"),
      device("h3", "q1", { type: "QAT", vendor: "8086", status: "MAINTAINING" }),
    ]);
    const uuids = async (filter: object) => (await read.listDevices(filter, 100)).items.map((d) => d.uuid);
    expect(await uuids({})).toEqual(["d1", "f1", "d2", "q1"]);
    expect(await uuids({ hostname: "h1" })).toEqual(["d1", "d2"]);
    expect(await uuids({ vendor: "8086" })).toEqual(["f1", "q1"]);
    expect(await uuids({ vendor: "8086", type: "QAT" })).toEqual(["q1"]);
    expect(await uuids({ status: "MAINTAINING" })).toEqual(["q1"]);
    expect(await uuids({ hostname: "h9" })).toEqual([]);

    const p1 = await read.listDevices({}, 3);
    expect(p1).toMatchObject({ totalCount: 4, hasNextPage: true });
    const p2 = await read.listDevices({}, 3, p1.cursors.at(-1));
    expect(p2.items.map((d) => d.uuid)).toEqual(["q1"]);
    expect(p2).toMatchObject({ totalCount: 4, hasNextPage: false });
    expect(p2.cursors).toHaveLength(1);
  });

  it("follows changes: device fields, status, attribute values in place, re-parenting", async () => {
    const { read } = await given([
      ...gpuHost("h1"),
      ...fpgaHost,
      { type: "DeviceChanged", data: { hostname: "h1", deviceUuid: "d1", changes: { vendor: "1002", model: "mi300" }, at: T(20) } },
      { type: "DeviceHealthChanged", data: { hostname: "h1", deviceUuid: "d1", health: { status: "CRITICAL", reasons: [{ code: "GPU_LOST", message: "GPU is lost" }] }, at: T(20) } },
      { type: "DeviceTopologyChanged", data: { hostname: "h1", deviceUuid: "d1", topology: { numaNode: 1, pcieRoot: "0000:00:01.0", pcieSwitch: null, linkDomain: null }, at: T(20) } },
      { type: "DeviceStatusChanged", data: { hostname: "h1", deviceUuid: "d1", status: "MAINTAINING", at: T(21) } },
      attribute("h1", "p1", "a1-rc", "rc", "VGPU"),
      { type: "AttributeRemoved", data: { hostname: "h1", deployableUuid: "p1", attributeUuid: "a1-t0", key: "trait0", at: T(22) } },
      { type: "DeployableChanged", data: { hostname: "h2", deployableUuid: "fn-b", changes: { numAccelerators: 4, parentUuid: "fn-a" }, at: T(23) } },
      { type: "AttachHandleChanged", data: { hostname: "h2", deployableUuid: "fn-a", handleUuid: "ha", handleType: "MDEV", at: T(24) } },
    ]);
    const [d1] = await read.getDevices(["d1"]);
    expect(d1).toMatchObject({ vendor: "1002", model: "mi300", status: "MAINTAINING", updatedAt: T(21) });
    expect(d1!.health).toEqual({ status: "CRITICAL", reasons: [{ code: "GPU_LOST", message: "GPU is lost" }] });
    expect(d1!.topology).toEqual({ numaNode: 1, pcieRoot: "0000:00:01.0", pcieSwitch: null, linkDomain: null });
    expect((await read.listDevices({ vendor: "10de" }, 10)).totalCount).toBe(0);
    expect((await read.listDevices({ vendor: "1002", status: "MAINTAINING" }, 10)).items.map((d) => d.uuid)).toEqual(["d1"]);
    expect((await read.listDevices({ status: "ENABLED" }, 10)).items.map((d) => d.uuid)).toEqual(["f1"]);

    const [p1] = await read.getDeployables(["p1"]);
    expect(p1!.attributes.map((a) => `${a.key}=${a.value}`)).toEqual(["rc=VGPU", "trait1=CUSTOM_GPU_PRODUCT_ID_1EB8"]);
    expect(p1!.resourceClass).toBe("VGPU");
    expect(p1!.traits).toEqual(["CUSTOM_GPU_PRODUCT_ID_1EB8"]);

    expect((await read.childrenOf(["region", "fn-a"])).map((l) => l.map((d) => d.uuid))).toEqual([["fn-a"], ["fn-b"]]);
    expect((await read.getDeployables(["fn-b"]))[0]).toMatchObject({ numAccelerators: 4, parentUuid: "fn-a", updatedAt: T(23) });
    expect((await read.getHandles(["ha"]))[0]!.type).toBe("MDEV");
  });

  it("follows a device's cleaning loop: requested, cleaned, qualified; failed with the reason", async () => {
    const h = { hostname: "h1", deviceUuid: "d1" };
    const loop: DomainEvent[] = [
      ...gpuHost("h1"),
      { type: "DeviceCleaningRequirementSet", data: { ...h, required: true, by: "admin", at: T(20) } },
      { type: "DeviceCleaningRequested", data: { ...h, requestId: "c1", reason: "the device requires a clean after each use", at: T(21) } },
    ];
    const requested = await given(loop);
    expect((await requested.read.getDevices(["d1"]))[0]).toMatchObject({
      cleaningRequired: true,
      cleaningInFlight: { requestId: "c1", reason: "the device requires a clean after each use", requestedAt: T(21) },
      updatedAt: T(21),
    });
    const cleaned: DomainEvent = { type: "DeviceCleaned", data: { ...h, requestId: "c1", digest: "sha256:00", command: ["nvidia-smi", "-r"], durationMs: 9, at: T(22) } };
    const qualifying = await given([...loop, cleaned]);
    expect((await qualifying.read.getDevices(["d1"]))[0]).toMatchObject({
      cleaningInFlight: null,
      qualifyingSince: T(22),
      lastCleaning: { requestId: "c1", outcome: "cleaned", digest: "sha256:00", command: ["nvidia-smi", "-r"], durationMs: 9, reason: null, at: T(22) },
    });
    const qualified = await given([...loop, cleaned, { type: "DeviceQualified", data: { ...h, at: T(23) } }]);
    expect((await qualified.read.getDevices(["d1"]))[0]).toMatchObject({ qualifyingSince: null, failure: null });
    const failed = await given([
      ...loop,
      { type: "DeviceCleaningFailed", data: { ...h, requestId: "c1", reason: "reset refused", at: T(22) } },
      { type: "DeviceFailed", data: { ...h, reason: "cleaning failed: reset refused", at: T(22) } },
    ]);
    expect((await failed.read.getDevices(["d1"]))[0]).toMatchObject({
      cleaningInFlight: null,
      failure: { reason: "cleaning failed: reset refused", at: T(22) },
      lastCleaning: { outcome: "failed", reason: "reset refused" },
    });
  });

  it("keeps each taint of a device, replaced by key and effect, removed one by one; the status follows", async () => {
    const t = (key: string, effect: "NoSchedule" | "NoExecute", n: number, reason = "r") => ({ key, value: "", effect, by: "alice", reason, at: T(n) });
    const maintenance = { key: "cyborg.openstack.org/maintenance", value: "", effect: "NoSchedule", by: "", reason: "set to MAINTAINING", at: T(20) };
    const { read } = await given([
      ...gpuHost("h1"),
      ...fpgaHost,
      { type: "DeviceStatusChanged", data: { hostname: "h1", deviceUuid: "d1", status: "MAINTAINING", at: T(20) } },
      { type: "DeviceTainted", data: { hostname: "h1", deviceUuid: "d1", taint: t("k", "NoExecute", 21), status: "MAINTAINING", at: T(21) } },
      { type: "DeviceTainted", data: { hostname: "h1", deviceUuid: "d1", taint: t("k", "NoSchedule", 22), status: "MAINTAINING", at: T(22) } },
      { type: "DeviceTainted", data: { hostname: "h1", deviceUuid: "d1", taint: t("k", "NoExecute", 23, "again"), status: "MAINTAINING", at: T(23) } },
      { type: "DeviceUntainted", data: { hostname: "h1", deviceUuid: "d1", key: "k", effect: "NoSchedule", by: "bob", reason: "", status: "MAINTAINING", at: T(24) } },
      { type: "DeviceUntainted", data: { hostname: "h1", deviceUuid: "d1", key: "cyborg.openstack.org/maintenance", effect: "NoSchedule", by: "bob", reason: "", status: "MAINTAINING", at: T(25) } },
      { type: "DeviceTainted", data: { hostname: "h2", deviceUuid: "f1", taint: t("j", "NoSchedule", 26), status: "MAINTAINING", at: T(26) } },
      { type: "DeviceUntainted", data: { hostname: "h2", deviceUuid: "f1", key: "j", effect: "NoSchedule", by: "bob", reason: "", status: "ENABLED", at: T(27) } },
    ]);
    const [d1, f1] = await read.getDevices(["d1", "f1"]);
    expect(d1!.taints).toEqual([t("k", "NoExecute", 23, "again")]);
    expect(d1).toMatchObject({ status: "MAINTAINING", updatedAt: T(25) });
    expect(f1).toMatchObject({ taints: [], status: "ENABLED" });
    expect((await read.listDevices({ status: "MAINTAINING" }, 10)).items.map((d) => d.uuid)).toEqual(["d1"]);
    const legacy = (status: "ENABLED" | "MAINTAINING", n: number) => ({ type: "DeviceStatusChanged" as const, data: { hostname: "h1", deviceUuid: "d1", status, at: T(n) } });
    const old = await given([...gpuHost("h1"), legacy("MAINTAINING", 20)]);
    expect((await old.read.getDevices(["d1"]))[0]!.taints).toEqual([maintenance]);
    const back = await given([...gpuHost("h1"), legacy("MAINTAINING", 20), legacy("ENABLED", 21)]);
    expect((await back.read.getDevices(["d1"]))[0]).toMatchObject({ taints: [], status: "ENABLED" });
  });

  it("marks allocation and loss, and leaves no key behind once everything is removed", async () => {
    const lifecycle: DomainEvent[] = [
      ...gpuHost("h1"),
      allocated("h1", "d1", "p1", "h1", "arq-1"),
      { type: "DeviceLost", data: { hostname: "h1", deviceUuid: "d1", arqUuids: ["arq-1"], at: T(30) } },
      { type: "AttachHandleLost", data: { hostname: "h1", deployableUuid: "p1", handleUuid: "h1", arqUuid: "arq-1", at: T(30) } },
    ];
    const held = await given(lifecycle);
    expect((await held.read.getHandles(["h1"]))[0]).toMatchObject({ inUse: true, arqUuid: "arq-1", lost: true });
    expect((await held.read.getDevices(["d1"]))[0]).toMatchObject({ lost: true, updatedAt: T(30) });

    const gone = await given([
      ...lifecycle,
      released("h1", "p1", "h1", "arq-1"),
      { type: "AttachHandleRemoved", data: { hostname: "h1", deployableUuid: "p1", handleUuid: "h1", at: T(31) } },
      ...["a1-rc", "a1-t0", "a1-t1"].map(
        (a): DomainEvent => ({ type: "AttributeRemoved", data: { hostname: "h1", deployableUuid: "p1", attributeUuid: a, key: "k", at: T(31) } }),
      ),
      { type: "DeployableRemoved", data: { hostname: "h1", deviceUuid: "d1", deployableUuid: "p1", at: T(31) } },
      { type: "DeviceRemoved", data: { hostname: "h1", deviceUuid: "d1", at: T(31) } },
    ]);
    expect(await gone.read.getDevices(["d1"])).toEqual([null]);
    expect(await gone.read.getDeployables(["p1"])).toEqual([null]);
    expect(await gone.read.getHandles(["h1"])).toEqual([null]);
    expect((await gone.read.listDevices({ hostname: "h1" }, 10)).totalCount).toBe(0);
    // Only the host's change mark stays (one per host: when its stream last changed the model, for the placement engine's kept candidates).
    const { ["{device-tree}:changed-hosts"]: mark, ...left } = (await gone.store.dump("device-tree")).keys;
    expect(left).toEqual({});
    expect(mark).toBeDefined();
  });

  it("puts a device that comes back after removal at its new discovery position", async () => {
    const { read } = await given([
      device("h1", "d1"),
      device("h1", "d2"),
      { type: "DeviceRemoved", data: { hostname: "h1", deviceUuid: "d1", at: T(40) } },
      device("h1", "d1", { at: T(41) }),
    ]);
    expect((await read.listDevices({ hostname: "h1" }, 10)).items.map((d) => [d.uuid, d.createdAt])).toEqual([
      ["d2", T(1)],
      ["d1", T(41)],
    ]);
  });

  it("treats released handles as free again", async () => {
    const { read } = await given([...gpuHost("h1"), allocated("h1", "d1", "p1", "h1", "arq-1"), released("h1", "p1", "h1", "arq-1")]);
    expect((await read.getHandles(["h1"]))[0]).toMatchObject({ inUse: false, arqUuid: null, lost: false });
  });
});
