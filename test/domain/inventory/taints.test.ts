/** Device taints on the host stream: set, replaced, removed; Cyborg's status over them; what they keep off the device. */
import { describe, expect, it } from "vitest";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import { deviceLifecycle, lifecycleOf } from "../../../src/domain/inventory/device-lifecycle.js";
import type { InventoryEvent } from "../../../src/domain/inventory/events.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { desiredProviders } from "../../../src/domain/inventory/resource-providers.js";
import { MAINTENANCE_TAINT_KEY, MAX_TAINTS_PER_DEVICE } from "../../../src/domain/inventory/taints.js";
import type { TaintEffect } from "../../../src/domain/shared/tolerations.js";
import { expectDomainError } from "../decider-spec.js";
import { allocate, apply, at, bdf, decide, fold, fpga, HOST, release, reported, types } from "./fixtures.js";

const rp = (bus: string) => rpUuidFor(`${HOST}_${bdf(bus)}`);
const host = reported([fpga("af", { handles: 2 }), fpga("b0")]);
const [dev, other] = [...host.devices.keys()] as [string, string];

const taint = (key: string, effect: TaintEffect = "NoSchedule", extra: { value?: string; by?: string; reason?: string; deviceUuid?: string } = {}): HostCommand => ({
  type: "TaintDevice",
  data: { hostname: HOST, deviceUuid: extra.deviceUuid ?? dev, key, value: extra.value ?? "", effect, by: extra.by ?? "alice", reason: extra.reason ?? "fan noise", at },
});
const untaint = (key: string, effect: TaintEffect | null = null, by = "alice"): HostCommand => ({
  type: "UntaintDevice",
  data: { hostname: HOST, deviceUuid: dev, key, effect, by, reason: "fixed", at },
});
const setStatus = (status: "ENABLED" | "MAINTAINING"): HostCommand => ({ type: "SetDeviceStatus", data: { hostname: HOST, deviceUuid: dev, status, by: "cyborg-rest", reason: `Cyborg ${status}`, at } });
const withTolerations = (cmd: HostCommand, tolerations: Array<{ key: string; value: string | null; effect: TaintEffect | null }>): HostCommand =>
  ({ ...cmd, data: { ...cmd.data, tolerations } }) as HostCommand;
const deviceAfter = (state: typeof host, uuid = dev) => state.devices.get(uuid)!;

describe("device taints", () => {
  it("a taint is recorded with who, why and when; the device is MAINTAINING for Cyborg", () => {
    const events = decide(host, taint("example.com/burn-in", "NoSchedule", { value: "gpu" }));
    expect(events).toEqual([
      {
        type: "DeviceTainted",
        data: { hostname: HOST, deviceUuid: dev, taint: { key: "example.com/burn-in", value: "gpu", effect: "NoSchedule", by: "alice", reason: "fan noise", at }, status: "MAINTAINING", at },
      },
    ]);
    const after = fold(events, host);
    expect(deviceAfter(after).taints).toEqual([{ key: "example.com/burn-in", value: "gpu", effect: "NoSchedule", by: "alice", reason: "fan noise", at }]);
    expect(deviceAfter(after).status).toBe("MAINTAINING");
    expect(deviceAfter(after, other).status).toBe("ENABLED");
  });

  it("one taint per key and effect: the same again is nothing, a changed one replaces it, another effect adds one", () => {
    const s1 = apply(host, taint("k", "NoSchedule"));
    expect(decide(s1, taint("k", "NoSchedule"))).toEqual([]);
    const s2 = apply(s1, taint("k", "NoSchedule", { reason: "worse now" }));
    expect(deviceAfter(s2).taints.map((t) => t.reason)).toEqual(["worse now"]);
    const s3 = apply(s2, taint("k", "NoExecute"));
    expect(deviceAfter(s3).taints.map((t) => `${t.key}:${t.effect}`)).toEqual(["k:NoSchedule", "k:NoExecute"]);
  });

  it("untaint removes the taint of that key and effect, or every effect of the key; ENABLED once none is left", () => {
    const s = apply(apply(apply(host, taint("k", "NoSchedule")), taint("k", "NoExecute")), taint("j"));
    const one = decide(s, untaint("k", "NoExecute"));
    expect(one).toEqual([{ type: "DeviceUntainted", data: { hostname: HOST, deviceUuid: dev, key: "k", effect: "NoExecute", by: "alice", reason: "fixed", status: "MAINTAINING", at } }]);
    const both = decide(s, untaint("k"));
    expect(both.map((e) => (e as Extract<InventoryEvent, { type: "DeviceUntainted" }>).data.effect)).toEqual(["NoSchedule", "NoExecute"]);
    const clear = apply(fold(both, s), untaint("j"));
    expect(deviceAfter(clear).taints).toEqual([]);
    expect(deviceAfter(clear).status).toBe("ENABLED");
    expect(fold(decide(fold(both, s), untaint("j")), fold(both, s)).devices.get(dev)!.status).toBe("ENABLED");
  });

  it("refuses to remove a taint the device does not carry, naming what it carries", () => {
    expectDomainError(() => decide(host, untaint("k")), "NOT_FOUND", "key", /carries no taint k: it carries none/);
    expectDomainError(() => decide(apply(host, taint("k")), untaint("k", "NoExecute")), "NOT_FOUND", "key", /it carries k:NoSchedule/);
  });

  it("refuses bad keys, values, effects and an empty reason, naming the field", () => {
    expectDomainError(() => decide(host, taint("Bad Key")), "BAD_USER_INPUT", "key", /not valid/);
    expectDomainError(() => decide(host, taint("UPPER.example/x")), "BAD_USER_INPUT", "key", /DNS subdomain/);
    expectDomainError(() => decide(host, taint("k", "NoSchedule", { value: "a b" })), "BAD_USER_INPUT", "value");
    expectDomainError(() => decide(host, taint("k", "PreferNoSchedule" as TaintEffect)), "BAD_USER_INPUT", "effect", /NoSchedule or NoExecute/);
    expectDomainError(() => decide(host, taint("k", "NoSchedule", { reason: "  " })), "BAD_USER_INPUT", "reason");
    expectDomainError(() => decide(host, taint("k", "NoSchedule", { deviceUuid: "nope" })), "NOT_FOUND", "uuid");
  });

  it(`a device carries at most ${MAX_TAINTS_PER_DEVICE} taints; replacing one is still allowed`, () => {
    let s = host;
    for (let i = 0; i < MAX_TAINTS_PER_DEVICE; i++) s = apply(s, taint(`k${i}`));
    expectDomainError(() => decide(s, taint("one-more")), "CONFLICT", "key", /at most|the most/);
    expect(types(decide(s, taint("k0", "NoSchedule", { reason: "again" })))).toEqual(["DeviceTainted"]);
  });
});

describe("Cyborg's status over the maintenance taint", () => {
  it("MAINTAINING sets the maintenance taint as the caller; ENABLED removes it", () => {
    const down = apply(host, setStatus("MAINTAINING"));
    expect(deviceAfter(down).taints).toEqual([{ key: MAINTENANCE_TAINT_KEY, value: "", effect: "NoSchedule", by: "cyborg-rest", reason: "Cyborg MAINTAINING", at }]);
    expect(decide(down, setStatus("MAINTAINING"))).toEqual([]);
    const up = apply(down, setStatus("ENABLED"));
    expect(deviceAfter(up).taints).toEqual([]);
    expect(decide(up, setStatus("ENABLED"))).toEqual([]);
  });
  it("a device tainted otherwise is MAINTAINING; disable adds the maintenance taint beside it", () => {
    const sick = apply(host, taint("cyborg.openstack.org/health", "NoExecute", { by: "health:ecc" }));
    expect(deviceAfter(sick).status).toBe("MAINTAINING");
    expect(deviceAfter(apply(sick, setStatus("MAINTAINING"))).taints.map((t) => t.key)).toEqual(["cyborg.openstack.org/health", MAINTENANCE_TAINT_KEY]);
  });
  it("ENABLED is refused while other taints would keep the device MAINTAINING, naming them; nothing is removed", () => {
    const both = apply(apply(host, setStatus("MAINTAINING")), taint("cyborg.openstack.org/health", "NoExecute", { by: "health:xid", reason: "XID 79" }));
    const err = expectDomainError(() => decide(both, setStatus("ENABLED")), "CONFLICT", "uuid", /cyborg.openstack.org\/health:NoExecute \(by health:xid: XID 79\).*untaintDevice/);
    expect(err.details).toMatchObject({ reason: "DEVICE_TAINTED" });
  });
  it("reads a status change written before taints as the maintenance taint", () => {
    const legacy = (status: "ENABLED" | "MAINTAINING"): InventoryEvent => ({ type: "DeviceStatusChanged", data: { hostname: HOST, deviceUuid: dev, status, at } });
    const down = fold([legacy("MAINTAINING")], host);
    expect(deviceAfter(down).taints).toMatchObject([{ key: MAINTENANCE_TAINT_KEY, effect: "NoSchedule" }]);
    expect(deviceAfter(down).status).toBe("MAINTAINING");
    expectDomainError(() => decide(down, allocate(rp("af"), "arq-1")), "CONFLICT", "deviceRpUuid");
    expect(types(decide(down, setStatus("ENABLED")))).toEqual(["DeviceUntainted"]);
    expect(deviceAfter(fold([legacy("ENABLED")], down)).taints).toEqual([]);
  });
});

describe("what a taint keeps off the device", () => {
  it("no new bind lands on a device with a NoSchedule or a NoExecute taint; the refusal names the taint", () => {
    for (const effect of ["NoSchedule", "NoExecute"] as const) {
      const s = apply(host, taint("example.com/x", effect, { reason: "bad fan" }));
      const err = expectDomainError(() => decide(s, allocate(rp("af"), "arq-1")), "CONFLICT", "deviceRpUuid", new RegExp(`example.com/x:${effect} \\(by alice: bad fan\\)`));
      expect(err.details).toEqual({ reason: "DEVICE_TAINTED", taints: [`example.com/x:${effect}`] });
      expect(types(decide(s, allocate(rp("b0"), "arq-1")))).toEqual(["AttachHandleAllocated"]);
    }
  });
  it("a group that tolerates the taint binds there (by key; by key and value; by key and effect)", () => {
    const s = apply(host, taint("example.com/burn-in", "NoSchedule", { value: "gpu" }));
    const bind = allocate(rp("af"), "arq-1");
    expect(types(decide(s, withTolerations(bind, [{ key: "example.com/burn-in", value: null, effect: null }])))).toEqual(["AttachHandleAllocated"]);
    expect(types(decide(s, withTolerations(bind, [{ key: "example.com/burn-in", value: "gpu", effect: "NoSchedule" }])))).toEqual(["AttachHandleAllocated"]);
    expectDomainError(() => decide(s, withTolerations(bind, [{ key: "example.com/burn-in", value: "fpga", effect: null }])), "CONFLICT", "deviceRpUuid");
    expectDomainError(() => decide(s, withTolerations(bind, [{ key: "example.com/burn-in", value: null, effect: "NoExecute" }])), "CONFLICT", "deviceRpUuid");
    const two = apply(s, taint("cyborg.openstack.org/health", "NoExecute"));
    expectDomainError(() => decide(two, withTolerations(bind, [{ key: "example.com/burn-in", value: null, effect: null }])), "CONFLICT", "deviceRpUuid", /cyborg.openstack.org\/health:NoExecute/);
  });
  it("the holders keep their handles: a release after the taint is taken as ever", () => {
    const held = apply(apply(host, allocate(rp("af"), "arq-1")), taint("k", "NoExecute"));
    expect(types(decide(held, release("arq-1")))).toEqual(["AttachHandleReleased"]);
    expect(decide(held, allocate(rp("af"), "arq-1"))).toEqual([]);
  });
  it("Placement reserves a tainted device's providers whole, and frees them once the last taint goes", () => {
    const reserved = (s: typeof host) => desiredProviders(s).map((p) => [p.deviceUuid === dev ? "tainted" : "other", p.total, p.reserved]);
    const s = apply(host, taint("k", "NoSchedule"));
    expect(reserved(s)).toEqual([["tainted", 2, 2], ["other", 1, 0]]);
    expect(reserved(apply(s, untaint("k")))).toEqual([["tainted", 2, 0], ["other", 1, 0]]);
  });
});

describe("the device's lifecycle state", () => {
  const lifecycle = (s: typeof host) => deviceLifecycle(s.devices.get(dev)!);
  it("AVAILABLE, TAINTED (NoSchedule), DRAINING (NoExecute with holders), DRAINED (NoExecute, none left)", () => {
    expect(lifecycle(host)).toBe("AVAILABLE");
    const held = apply(host, allocate(rp("af"), "arq-1"));
    expect(lifecycle(apply(held, taint("k", "NoSchedule")))).toBe("TAINTED");
    const draining = apply(held, taint("k", "NoExecute"));
    expect(lifecycle(draining)).toBe("DRAINING");
    expect(lifecycle(apply(draining, release("arq-1")))).toBe("DRAINED");
    expect(lifecycle(apply(apply(draining, release("arq-1")), untaint("k")))).toBe("AVAILABLE");
  });
  it("the loop's later steps come first: FAILED > CLEANING > QUALIFYING > the taints", () => {
    const taints = [{ effect: "NoExecute" as const }];
    expect(lifecycleOf({ taints, holders: 1, failed: true, cleaning: true })).toBe("FAILED");
    expect(lifecycleOf({ taints, holders: 1, cleaning: true, qualifying: true })).toBe("CLEANING");
    expect(lifecycleOf({ taints, holders: 0, qualifying: true })).toBe("QUALIFYING");
    expect(lifecycleOf({ taints: [{ effect: "NoSchedule" }, { effect: "NoExecute" }], holders: 0 })).toBe("DRAINED");
  });
});
