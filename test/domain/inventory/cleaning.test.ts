/** Cleaning before reuse and qualification: every transition of the device's cleaning loop. */
import { describe, expect, it } from "vitest";
import type { HostCommand } from "../../../src/domain/inventory/decider.js";
import { deviceLifecycle } from "../../../src/domain/inventory/device-lifecycle.js";
import { cleaningRequestIdFor, rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { desiredProviders, PROVIDER_EVENT_TYPES } from "../../../src/domain/inventory/resource-providers.js";
import type { HostState } from "../../../src/domain/inventory/state.js";
import { expectDomainError } from "../decider-spec.js";
import { allocate, apply, at, bdf, decide, fold, fpga, HOST, release, reported, types } from "./fixtures.js";

const rp = rpUuidFor(`${HOST}_${bdf("af")}`);
const fresh = reported([fpga("af", { handles: 2 })]);
const deviceUuid = [...fresh.devices.keys()][0]!;
const firstRequest = cleaningRequestIdFor(deviceUuid, 0);

const requireCleaning = (required = true): HostCommand => ({ type: "SetDeviceCleaningRequired", data: { hostname: HOST, deviceUuid, required, by: "admin", at } });
const allocateDirty = (arqUuid: string): HostCommand => ({ type: "AllocateAttachHandle", data: { hostname: HOST, rpUuid: rp, arqUuid, instanceUuid: `vm-${arqUuid}`, at, cleanAfterUse: true } });
const cleaned = (requestId = firstRequest, extra: Record<string, unknown> = {}): HostCommand => ({
  type: "ReportDeviceCleaned",
  data: { hostname: HOST, deviceUuid, requestId, digest: "sha256:ab12", command: ["nvidia-smi", "-r"], durationMs: 120, at, ...extra },
});
const cleaningFailed = (requestId = firstRequest, reason: unknown = "reset refused"): HostCommand => ({
  type: "ReportDeviceCleaningFailed",
  data: { hostname: HOST, deviceUuid, requestId, reason, at },
});
const device = (s: HostState) => s.devices.get(deviceUuid)!;
/** The host's report as the decider takes it (qualification included). */
const report = (s: HostState, devices: unknown) => ({ events: decide(s, { type: "ReportHostInventory", data: { hostname: HOST, devices, at } }) });

describe("cleaning before reuse", () => {
  const required = apply(fresh, requireCleaning());
  const held = apply(apply(required, allocate(rp, "arq-1")), allocate(rp, "arq-2"));

  it("an operator's requirement is recorded once", () => {
    expect(types(decide(fresh, requireCleaning()))).toEqual(["DeviceCleaningRequirementSet"]);
    expect(decide(required, requireCleaning())).toEqual([]);
    expect(device(required).cleaning.required).toBe(true);
  });

  it("is requested in the release that lets the last holder go, not before", () => {
    expect(types(decide(held, release("arq-1")))).toEqual(["AttachHandleReleased"]);
    const events = decide(apply(held, release("arq-1")), release("arq-2"));
    expect(types(events)).toEqual(["AttachHandleReleased", "DeviceCleaningRequested"]);
    expect(events[1]).toEqual({
      type: "DeviceCleaningRequested",
      data: { hostname: HOST, deviceUuid, requestId: firstRequest, reason: "the device requires a clean after each use", at },
    });
  });

  it("a device that requires nothing is not cleaned", () => {
    const used = apply(fresh, allocate(rp, "arq-1"));
    expect(types(decide(used, release("arq-1")))).toEqual(["AttachHandleReleased"]);
  });

  it("a holder whose profile group asks for it has the device cleaned after it", () => {
    const used = apply(fresh, allocateDirty("arq-1"));
    expect(decide(fresh, allocateDirty("arq-1"))[0]).toMatchObject({ data: { cleanAfterUse: true } });
    const events = decide(used, release("arq-1"));
    expect(types(events)).toEqual(["AttachHandleReleased", "DeviceCleaningRequested"]);
    expect(events[1]!.data).toMatchObject({ reason: expect.stringMatching(/accel:clean_after_use/) });
  });

  describe("while cleaning and qualifying, and once failed", () => {
    const cleaning = apply(apply(apply(held, release("arq-1")), release("arq-2")), { type: "SetDeviceStatus", data: { hostname: HOST, deviceUuid, status: "ENABLED", at } });

    it("no bind takes the device while it is cleaned", () => {
      expectDomainError(() => decide(cleaning, allocate(rp, "arq-3")), "CONFLICT", "deviceRpUuid", /being cleaned/);
    });

    it("cleaned: the outcome and digest are recorded and the device waits for a healthy report", () => {
      const events = decide(cleaning, cleaned());
      expect(events).toEqual([
        { type: "DeviceCleaned", data: { hostname: HOST, deviceUuid, requestId: firstRequest, digest: "sha256:ab12", command: ["nvidia-smi", "-r"], durationMs: 120, at } },
      ]);
      const qualifying = fold(events, cleaning);
      expect(device(qualifying).cleaning).toMatchObject({ inFlight: null, qualifyingSince: at, last: { outcome: "cleaned", digest: "sha256:ab12" } });
      expectDomainError(() => decide(qualifying, allocate(rp, "arq-3")), "CONFLICT", "deviceRpUuid", /QUALIFYING/);
      expect(decide(qualifying, cleaned())).toEqual([]);
      expectDomainError(() => decide(qualifying, cleaningFailed()), "CONFLICT", "requestId", /already reported cleaned/);
    });

    it("the next report showing the device qualifies it, and it is offered again", () => {
      const qualifying = apply(cleaning, cleaned());
      const r = report(qualifying, [fpga("af", { handles: 2 })]);
      expect(types(r.events)).toEqual(["DeviceQualified", "HostReportSettled"]);
      const back = fold(r.events, qualifying);
      expect(types(decide(back, allocate(rp, "arq-3")))).toEqual(["AttachHandleAllocated"]);
      expect(report(back, [fpga("af", { handles: 2 })]).events).toEqual([]);
    });

    it("a report showing the device CRITICAL fails it, naming the reasons; UNKNOWN leaves it waiting", () => {
      const qualifying = apply(cleaning, cleaned());
      const critical = { status: "CRITICAL", reasons: [{ code: "XID", message: "Xid 79: GPU has fallen off the bus" }] };
      const events = report(qualifying, [{ ...fpga("af", { handles: 2 }), health: critical }]).events;
      expect(types(events).slice(-2)).toEqual(["DeviceFailed", "HostReportSettled"]);
      expect(events.at(-2)).toEqual({ type: "DeviceFailed", data: { hostname: HOST, deviceUuid, reason: "the health check after cleaning failed: XID", at } });
      const unknown = { status: "UNKNOWN", reasons: [{ code: "SOURCE_UNREADABLE", message: "nvidia-smi not found" }] };
      const waiting = report(qualifying, [{ ...fpga("af", { handles: 2 }), health: unknown }]).events;
      expect(types(waiting)).not.toContain("DeviceQualified");
      expect(types(waiting)).not.toContain("DeviceFailed");
    });

    it("a report without the device leaves it waiting", () => {
      const qualifying = apply(cleaning, cleaned());
      expect(types(report(qualifying, []).events)).not.toContain("DeviceQualified");
    });

    it("a failed clean leaves the device FAILED with the reason until an operator has it cleaned again", () => {
      const events = decide(cleaning, cleaningFailed());
      expect(types(events)).toEqual(["DeviceCleaningFailed", "DeviceFailed"]);
      const failed = fold(events, cleaning);
      expect(device(failed).cleaning.failed).toEqual({ reason: "cleaning failed: reset refused", at });
      expectDomainError(() => decide(failed, allocate(rp, "arq-3")), "CONFLICT", "deviceRpUuid", /FAILED \(cleaning failed: reset refused\)/);
      expect(report(failed, [fpga("af", { handles: 2 })]).events).toEqual([]);
      const again = decide(failed, { type: "RequestDeviceCleaning", data: { hostname: HOST, deviceUuid, reason: "repaired", at } });
      expect(again).toEqual([{ type: "DeviceCleaningRequested", data: { hostname: HOST, deviceUuid, requestId: cleaningRequestIdFor(deviceUuid, 1), reason: "repaired", at } }]);
      const recleaned = apply(fold(again, failed), cleaned(cleaningRequestIdFor(deviceUuid, 1)));
      const qualified = fold(report(recleaned, [fpga("af", { handles: 2 })]).events, recleaned);
      expect(device(qualified).cleaning).toMatchObject({ failed: null, qualifyingSince: null, inFlight: null });
      expect(types(decide(qualified, allocate(rp, "arq-3")))).toEqual(["AttachHandleAllocated"]);
    });

    it("a failed step's command line and duration are recorded with the reason, and checked", () => {
      const ran: HostCommand = { type: "ReportDeviceCleaningFailed", data: { hostname: HOST, deviceUuid, requestId: firstRequest, reason: "In use by another client", command: ["nvidia-smi", "--gpu-reset", "-i", "0000:af:00.0"], durationMs: 40.4, at } };
      const [failedEvent] = decide(cleaning, ran);
      expect(failedEvent).toEqual({ type: "DeviceCleaningFailed", data: { hostname: HOST, deviceUuid, requestId: firstRequest, reason: "In use by another client", command: ["nvidia-smi", "--gpu-reset", "-i", "0000:af:00.0"], durationMs: 40, at } });
      expect(device(apply(cleaning, ran)).cleaning.last).toMatchObject({ outcome: "failed", command: ["nvidia-smi", "--gpu-reset", "-i", "0000:af:00.0"], durationMs: 40 });
      expect(device(apply(cleaning, cleaningFailed())).cleaning.last).toMatchObject({ outcome: "failed", command: null, durationMs: null });
      expectDomainError(() => decide(cleaning, { ...ran, data: { ...ran.data, command: [] } } as HostCommand), "BAD_USER_INPUT", "command");
      expectDomainError(() => decide(cleaning, { ...ran, data: { ...ran.data, durationMs: -1 } } as HostCommand), "BAD_USER_INPUT", "durationMs");
    });

    it("a request no agent answers in time is closed as failed; a late or unknown report is refused", () => {
      const abandon: HostCommand = { type: "AbandonDeviceCleaning", data: { hostname: HOST, deviceUuid, requestId: firstRequest, reason: "no answer within 300 s", at } };
      expect(types(decide(cleaning, abandon))).toEqual(["DeviceCleaningFailed", "DeviceFailed"]);
      expect(decide(apply(cleaning, abandon), abandon)).toEqual([]);
      expectDomainError(() => decide(cleaning, cleaned("other")), "NOT_FOUND", "requestId");
    });

    it("reports are checked", () => {
      expectDomainError(() => decide(cleaning, cleaned(firstRequest, { digest: "" })), "BAD_USER_INPUT", "digest");
      expectDomainError(() => decide(cleaning, cleaned(firstRequest, { command: [] })), "BAD_USER_INPUT", "command");
      expectDomainError(() => decide(cleaning, cleaned(firstRequest, { durationMs: -1 })), "BAD_USER_INPUT", "durationMs");
      expectDomainError(() => decide(cleaning, cleaningFailed(firstRequest, "  ")), "BAD_USER_INPUT", "reason");
    });
  });

  it("the device's lifecycle state follows the loop: CLEANING, QUALIFYING, AVAILABLE; FAILED", () => {
    const cleaning = apply(apply(apply(held, release("arq-1")), release("arq-2")), requireCleaning());
    expect(deviceLifecycle(device(cleaning))).toBe("CLEANING");
    const qualifying = apply(cleaning, cleaned());
    expect(deviceLifecycle(device(qualifying))).toBe("QUALIFYING");
    expect(deviceLifecycle(device(fold(report(qualifying, [fpga("af", { handles: 2 })]).events, qualifying)))).toBe("AVAILABLE");
    expect(deviceLifecycle(device(apply(cleaning, cleaningFailed())))).toBe("FAILED");
  });

  it("Placement holds the device reserved while it is not offered: cleaning, qualifying, failed; free again once qualified", () => {
    const reserved = (s: HostState) => desiredProviders(s).map((p) => [p.total, p.reserved]);
    const cleaning = apply(apply(apply(held, release("arq-1")), release("arq-2")), requireCleaning());
    expect(reserved(fresh)).toEqual([[2, 0]]);
    expect(reserved(cleaning)).toEqual([[2, 2]]);
    const qualifying = apply(cleaning, cleaned());
    expect(reserved(qualifying)).toEqual([[2, 2]]);
    expect(reserved(fold(report(qualifying, [fpga("af", { handles: 2 })]).events, qualifying))).toEqual([[2, 0]]);
    expect(reserved(apply(cleaning, cleaningFailed()))).toEqual([[2, 2]]);
  });

  it("every event of the cleaning loop that changes whether the device is offered makes the Placement sync look again", () => {
    for (const t of ["DeviceCleaningRequested", "DeviceCleaned", "DeviceCleaningFailed", "DeviceQualified", "DeviceFailed"] as const) expect(PROVIDER_EVENT_TYPES).toContain(t);
  });

  it("an operator cannot clean a device that is held", () => {
    expectDomainError(
      () => decide(held, { type: "RequestDeviceCleaning", data: { hostname: HOST, deviceUuid, reason: "now", at } }),
      "CONFLICT",
      "uuid",
      /held by ARQ arq-1, arq-2/,
    );
  });
});
