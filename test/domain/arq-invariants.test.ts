import { describe, expect, it } from "vitest";
import type { Arq, ArqStreamState } from "../../src/domain/arqs/arq.js";
import { arqViolations, holdsHandle, type HeldHandle } from "../../src/domain/arqs/invariants.js";

const handle: HeldHandle = { hostname: "h1", rpUuid: "rp", instanceUuid: "vm", handleUuid: "hd" };
const arq = (over: Partial<Arq> = {}): Arq => ({
  uuid: "a1",
  state: "BOUND",
  deviceProfileName: "dp",
  deviceProfileUuid: "pu",
  deviceProfileGroupId: 0,
  deviceProfileVersion: 1,
  group: {},
  projectId: null,
  hostname: "h1",
  deviceRpUuid: "rp",
  instanceUuid: "vm",
  attachment: { deployableUuid: "d", handleUuid: "hd", handleType: "PCI", handleInfo: {} },
  bindFailureReason: null,
  eviction: null,
  createdAt: "t",
  updatedAt: null,
  ...over,
});
const live = (a: Arq): ArqStreamState => ({ status: "live", arq: a });

describe("ARQ invariants", () => {
  it("an ARQ holds its allocation while binding to its target, BOUND to that handle, or failed after BOUND with it", () => {
    expect(holdsHandle(arq({ state: "BIND_STARTED", attachment: null }), handle)).toBe(true);
    expect(holdsHandle(arq(), handle)).toBe(true);
    expect(holdsHandle(arq({ state: "BIND_FAILED" }), handle)).toBe(true);
    expect(holdsHandle(arq({ state: "BIND_FAILED", attachment: null }), handle)).toBe(false);
    expect(holdsHandle(arq({ state: "UNBOUND", attachment: null }), handle)).toBe(false);
    expect(holdsHandle(arq({ instanceUuid: "vm-2" }), handle)).toBe(false);
    expect(holdsHandle(arq({ attachment: { deployableUuid: "d", handleUuid: "other", handleType: "PCI", handleInfo: {} } }), handle)).toBe(false);
    expect(holdsHandle(null, handle)).toBe(false);
  });

  it("names each violation: an orphaned allocation, a BOUND ARQ without its handle, an unrecorded ARQ, a deleted one still counted", () => {
    expect(arqViolations({ arq: live(arq()), allocations: [handle], recorded: true })).toEqual([]);
    expect(arqViolations({ arq: live(arq({ state: "UNBOUND", attachment: null })), allocations: [handle], recorded: true })).toEqual([{ kind: "orphaned-allocation", hostname: "h1" }]);
    expect(arqViolations({ arq: live(arq()), allocations: [], recorded: true })).toEqual([{ kind: "bound-without-handle" }]);
    expect(arqViolations({ arq: live(arq({ state: "INITIAL", attachment: null })), allocations: [], recorded: false })).toEqual([{ kind: "unrecorded", initial: true }]);
    expect(arqViolations({ arq: { status: "deleted", arq: arq(), deletedAt: "t" }, allocations: [], recorded: true })).toEqual([{ kind: "deleted-still-recorded" }]);
    expect(arqViolations({ arq: { status: "absent" }, allocations: [handle], recorded: null })).toEqual([{ kind: "orphaned-allocation", hostname: "h1" }]);
  });
});
