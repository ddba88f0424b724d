import { describe, expect, it } from "vitest";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { initialHostState } from "../../../src/domain/inventory/state.js";
import { expectDomainError } from "../decider-spec.js";
import { allocate, apply, at, bdf, decide, fpga, HOST, pci, release, reported, types } from "./fixtures.js";

const rp = (bus: string) => rpUuidFor(`${HOST}_${bdf(bus)}`);
const deviceOf = (state: ReturnType<typeof reported>) => [...state.devices.values()][0]!;

describe("attach-handle allocation", () => {
  const host = reported([fpga("af", { handles: 2 })]);

  it("allocates the first free handle of the deployable, in report order", () => {
    const events = decide(host, allocate(rp("af"), "arq-1", "vm-1"));
    expect(types(events)).toEqual(["AttachHandleAllocated"]);
    expect(events[0]!.data).toMatchObject({ hostname: HOST, rpUuid: rp("af"), arqUuid: "arq-1", instanceUuid: "vm-1", handleType: "PCI", info: pci("af", "0"), at });
    const s1 = apply(host, allocate(rp("af"), "arq-1"));
    expect(decide(s1, allocate(rp("af"), "arq-2"))[0]!.data).toMatchObject({ info: pci("af", "1") });
  });
  it("refuses when no handle is free, naming the deployable", () => {
    const full = apply(apply(host, allocate(rp("af"), "arq-1")), allocate(rp("af"), "arq-2"));
    expectDomainError(() => decide(full, allocate(rp("af"), "arq-3")), "CONFLICT", "deviceRpUuid", /No free attach handle on deployable compute1_0000:af:00.0/);
  });
  it("refuses an unknown RP, or a host it knows nothing about", () => {
    expectDomainError(() => decide(host, allocate(rp("b0"), "arq-1")), "NOT_FOUND", "deviceRpUuid", /No deployable with resource provider/);
    expectDomainError(() => decide(initialHostState(), allocate(rp("af"), "arq-1")), "NOT_FOUND", "deviceRpUuid");
  });
  it("is idempotent per ARQ: a retry gets the same handle and emits nothing", () => {
    const s1 = apply(host, allocate(rp("af"), "arq-1", "vm-1"));
    expect(decide(s1, allocate(rp("af"), "arq-1", "vm-1"))).toEqual([]);
    expect(s1.allocations.get("arq-1")!.info).toEqual(pci("af", "0"));
  });
  it("refuses an ARQ that still holds a handle for another binding", () => {
    const s1 = apply(host, allocate(rp("af"), "arq-1", "vm-1"));
    expectDomainError(() => decide(s1, allocate(rp("af"), "arq-1", "vm-2")), "CONFLICT", "arqUuid", /still holds/);
  });
  it("release frees the handle for the next ARQ and is idempotent", () => {
    const s1 = apply(host, allocate(rp("af"), "arq-1"));
    const events = decide(s1, release("arq-1"));
    expect(types(events)).toEqual(["AttachHandleReleased"]);
    const s2 = apply(s1, release("arq-1"));
    expect(decide(s2, release("arq-1"))).toEqual([]);
    expect(decide(host, release("never"))).toEqual([]);
    expect(decide(s2, allocate(rp("af"), "arq-2"))[0]!.data).toMatchObject({ info: pci("af", "0") });
  });

  describe("device status", () => {
    const setStatus = (deviceUuid: string, status: "ENABLED" | "MAINTAINING") => ({ type: "SetDeviceStatus" as const, data: { hostname: HOST, deviceUuid, status, at } });
    it("MAINTAINING sets the maintenance taint; the same status again emits nothing", () => {
      const uuid = deviceOf(host).uuid;
      const taint = { key: "cyborg.openstack.org/maintenance", value: "", effect: "NoSchedule", by: "unknown", reason: "set to MAINTAINING", at };
      expect(decide(host, setStatus(uuid, "MAINTAINING"))).toEqual([{ type: "DeviceTainted", data: { hostname: HOST, deviceUuid: uuid, taint, status: "MAINTAINING", at } }]);
      expect(decide(host, setStatus(uuid, "ENABLED"))).toEqual([]);
      expect(decide(apply(host, setStatus(uuid, "MAINTAINING")), setStatus(uuid, "MAINTAINING"))).toEqual([]);
    });
    it("a device in maintenance is not allocated from; enabled again, it is", () => {
      const uuid = deviceOf(host).uuid;
      const down = apply(host, setStatus(uuid, "MAINTAINING"));
      expectDomainError(() => decide(down, allocate(rp("af"), "arq-1")), "CONFLICT", "deviceRpUuid", /maintenance/);
      expect(types(decide(apply(down, setStatus(uuid, "ENABLED")), allocate(rp("af"), "arq-1")))).toEqual(["AttachHandleAllocated"]);
    });
    it("refuses an unknown device or status", () => {
      expectDomainError(() => decide(host, setStatus("nope", "ENABLED")), "NOT_FOUND", "uuid");
      expectDomainError(() => decide(host, setStatus(deviceOf(host).uuid, "BROKEN" as "ENABLED")), "BAD_USER_INPUT", "status");
    });
  });
});
