import { describe, expect, it } from "vitest";
import { allocated, attribute, deployable, device, given, gpuHost, handle, released, T } from "./support.js";

describe("resource-providers projection", () => {
  const host = [
    ...gpuHost("h1", "1"),
    device("h1", "d2", { type: "FPGA" }),
    deployable("h1", "d2", "p2", { name: "h1_0000:5e:00.0", num: 2 }),
    attribute("h1", "p2", "a2-rc", "rc", "FPGA"),
    handle("h1", "d2", "p2", "h2a"),
    handle("h1", "d2", "p2", "h2b"),
    ...gpuHost("h2", "3"),
  ];

  it("shows one RP per deployable under its host, with class, inventory, usage and traits", async () => {
    const { read } = await given([...host, allocated("h1", "d2", "p2", "h2a", "arq-1"), allocated("h1", "d2", "p2", "h2b", "arq-2")]);
    expect(await read.listResourceProviders("h1")).toEqual([
      {
        uuid: "rp-p1",
        name: "h1_0000:af:00.0",
        parentProviderName: "h1",
        resourceClass: "PGPU",
        total: 1,
        reserved: 0,
        used: 0,
        traits: ["CUSTOM_GPU_NVIDIA", "CUSTOM_GPU_PRODUCT_ID_1EB8"],
        deployableUuid: "p1",
        deviceUuid: "d1",
        deviceState: "AVAILABLE",
        capacities: [],
      },
      {
        uuid: "rp-p2",
        name: "h1_0000:5e:00.0",
        parentProviderName: "h1",
        resourceClass: "FPGA",
        total: 2,
        reserved: 0,
        used: 2,
        traits: [],
        deployableUuid: "p2",
        deviceUuid: "d2",
        deviceState: "AVAILABLE",
        capacities: [],
      },
    ]);
    expect((await read.listResourceProviders()).map((rp) => rp.uuid)).toEqual(["rp-p1", "rp-p2", "rp-p3"]);
    expect(await read.listResourceProviders("h9")).toEqual([]);
  });

  it("leaves out deployables without a resource class (no inventory in Placement)", async () => {
    const { read } = await given([...gpuHost("h1"), device("h1", "f1", { type: "FPGA" }), deployable("h1", "f1", "region", { name: "h1_region" })]);
    expect((await read.listResourceProviders("h1")).map((rp) => rp.uuid)).toEqual(["rp-p1"]);
  });

  it("reserves the whole inventory while the device is MAINTAINING, and frees released handles", async () => {
    const { read } = await given([
      ...host,
      allocated("h1", "d2", "p2", "h2a", "arq-1"),
      allocated("h1", "d2", "p2", "h2b", "arq-2"),
      released("h1", "p2", "h2a", "arq-1"),
      { type: "DeviceStatusChanged", data: { hostname: "h1", deviceUuid: "d2", status: "MAINTAINING", at: T(40) } },
      { type: "DeployableChanged", data: { hostname: "h1", deployableUuid: "p2", changes: { numAccelerators: 3 }, at: T(41) } },
    ]);
    const [, p2] = await read.listResourceProviders("h1");
    expect(p2).toMatchObject({ total: 3, reserved: 3, used: 1 });
    const back = await given([
      ...host,
      { type: "DeviceStatusChanged", data: { hostname: "h1", deviceUuid: "d2", status: "MAINTAINING", at: T(40) } },
      { type: "DeviceStatusChanged", data: { hostname: "h1", deviceUuid: "d2", status: "ENABLED", at: T(41) } },
    ]);
    expect((await back.read.listResourceProviders("h1"))[1]).toMatchObject({ reserved: 0, used: 0 });
  });

  it("reserves the whole inventory while the device is cleaned, qualifying or failed, and frees it once qualified", async () => {
    const d = { hostname: "h1", deviceUuid: "d2" };
    const loop = [
      { type: "DeviceCleaningRequested" as const, data: { ...d, requestId: "c0", reason: "clean after use", at: T(40) } },
      { type: "DeviceCleaned" as const, data: { ...d, requestId: "c0", digest: "sha256:ab", command: ["reset"], durationMs: 5, at: T(41) } },
      { type: "DeviceQualified" as const, data: { ...d, at: T(42) } },
    ];
    const reserved = async (events: unknown[]) => (await (await given([...host, ...(events as never[])])).read.listResourceProviders("h1"))[1]!.reserved;
    expect(await reserved(loop.slice(0, 1))).toBe(2);
    expect(await reserved(loop.slice(0, 2))).toBe(2);
    expect(await reserved(loop)).toBe(0);
    const failed = [
      loop[0],
      { type: "DeviceCleaningFailed" as const, data: { ...d, requestId: "c0", reason: "reset refused", at: T(41) } },
      { type: "DeviceFailed" as const, data: { ...d, reason: "cleaning failed: reset refused", at: T(41) } },
    ];
    expect(await reserved(failed)).toBe(2);
  });

  it("gives each device its lifecycle state from its taints and holders, for every provider and the fleet view", async () => {
    const d = { hostname: "h1", deviceUuid: "d2" };
    const taint = (key: string, effect: "NoSchedule" | "NoExecute", at: number) => ({ type: "DeviceTainted" as const, data: { ...d, status: "MAINTAINING" as const, taint: { key, value: "", effect, by: "admin", reason: "r", at: T(at) }, at: T(at) } });
    const untaint = (key: string, effect: "NoSchedule" | "NoExecute", at: number, status: "ENABLED" | "MAINTAINING") => ({ type: "DeviceUntainted" as const, data: { ...d, key, effect, by: "admin", reason: "r", status, at: T(at) } });
    const held = [...host, allocated("h1", "d2", "p2", "h2a", "arq-1"), allocated("h1", "d2", "p2", "h2b", "arq-2")];
    const stateOf = async (events: unknown[]) => (await (await given(events as never[])).read.fleetView()).devices.find((x) => x.deviceUuid === "d2")?.state;
    expect(await stateOf([...held, taint("health", "NoExecute", 40)])).toBe("DRAINING");
    expect(await stateOf([...held, taint("health", "NoExecute", 40), released("h1", "p2", "h2a", "arq-1"), released("h1", "p2", "h2b", "arq-2")])).toBe("DRAINED");
    expect(await stateOf([...held, taint("m", "NoSchedule", 40), taint("health", "NoExecute", 41), untaint("health", "NoExecute", 42, "MAINTAINING")])).toBe("TAINTED");
    expect(await stateOf([...held, taint("m", "NoSchedule", 40), untaint("m", "NoSchedule", 41, "ENABLED")])).toBe("AVAILABLE");
    const fleet = await (await given([...held, taint("health", "NoExecute", 40)])).read.fleetView();
    expect(fleet.devices.map((x) => x.state).sort()).toEqual(["AVAILABLE", "AVAILABLE", "DRAINING"]);
    expect(fleet.capacity.find((c) => c.hostname === "h1" && c.resourceClass === "FPGA")).toMatchObject({ total: 2, used: 2, reserved: 2 });
  });

  it("removes the RP with its deployable", async () => {
    const { read, store } = await given([
      ...gpuHost("h1"),
      { type: "AttachHandleRemoved", data: { hostname: "h1", deployableUuid: "p1", handleUuid: "h1", at: T(50) } },
      ...["a1-rc", "a1-t0", "a1-t1"].map((a) => ({ type: "AttributeRemoved" as const, data: { hostname: "h1", deployableUuid: "p1", attributeUuid: a, key: "k", at: T(50) } })),
      { type: "DeployableRemoved", data: { hostname: "h1", deviceUuid: "d1", deployableUuid: "p1", at: T(50) } },
      { type: "DeviceRemoved", data: { hostname: "h1", deviceUuid: "d1", at: T(50) } },
    ]);
    expect(await read.listResourceProviders()).toEqual([]);
    // Only the host's change mark stays (one per host: when its stream last changed the model, for the placement engine's kept candidates).
    const { ["{resource-providers}:changed-hosts"]: mark, ...left } = (await store.dump("resource-providers")).keys;
    expect(left).toEqual({});
    expect(mark).toBeDefined();
  });
});
