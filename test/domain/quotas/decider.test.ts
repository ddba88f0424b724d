import { describe, expect, it } from "vitest";
import { arqAmounts } from "../../../src/domain/quotas/amounts.js";
import { decideQuota, evolveQuota, initialQuotaState, type QuotaCommand, type QuotaState } from "../../../src/domain/quotas/decider.js";
import { fold } from "../../../src/domain/shared/decider.js";
import type { DomainError } from "../../../src/domain/shared/types.js";

const at = "2026-01-01T00:00:00.000Z";
const run = (state: QuotaState, command: QuotaCommand) => fold({ evolve: evolveQuota }, state, decideQuota(command, state));
const claim = (ids: string[], group: Record<string, string>, defaults: Record<string, number> = {}): QuotaCommand => ({
  type: "Claim",
  data: { projectId: "p", claims: ids.map((arqUuid) => ({ arqUuid, amounts: arqAmounts(group) })), defaults, at },
});

describe("a project's quota stream", () => {
  it("counts an ARQ once, plus its group's resource amounts", () => {
    expect(arqAmounts({ "resources:GPU": "2", "trait:CUSTOM_X": "required" })).toEqual({ ARQS: 1, GPU: 2 });
  });

  it("lets usage reach a limit exactly, and refuses past it naming the class, the limit and the usage", () => {
    let s = run(initialQuotaState(), { type: "SetLimits", data: { projectId: "p", limits: { GPU: 8, FPGA: 2 }, at } });
    s = run(s, claim(["a", "b", "c"], { "resources:GPU": "2" }));
    expect(s.usage).toEqual({ ARQS: 3, GPU: 6 });
    s = run(s, claim(["d"], { "resources:GPU": "2" }));
    expect(s.usage.GPU).toBe(8);
    let err: DomainError | undefined;
    try {
      run(s, claim(["e"], { "resources:GPU": "1" }));
    } catch (e) {
      err = e as DomainError;
    }
    expect(err?.code).toBe("QUOTA_EXCEEDED");
    expect(err?.details).toEqual({ projectId: "p", resourceClass: "GPU", held: 8, asking: 1, limit: 8 });
    // FPGA is limited on its own.
    expect(() => run(s, claim(["f"], { "resources:FPGA": "3" }))).toThrow(/FPGA/);
  });

  it("is idempotent per ARQ: a claim again, or a release again, changes nothing", () => {
    let s = run(initialQuotaState(), claim(["a"], { "resources:FPGA": "1" }, { ARQS: 1 }));
    expect(decideQuota(claim(["a"], { "resources:FPGA": "1" }, { ARQS: 1 }), s)).toEqual([]);
    s = run(s, { type: "Release", data: { projectId: "p", arqUuids: ["a"], at } });
    expect(s.usage).toEqual({});
    expect(decideQuota({ type: "Release", data: { projectId: "p", arqUuids: ["a"], at } }, s)).toEqual([]);
    // Released, the place is free again.
    expect(run(s, claim(["b"], {}, { ARQS: 1 })).usage).toEqual({ ARQS: 1 });
  });

  it("follows the defaults for classes without a limit of its own; the project's limit wins", () => {
    expect(() => run(initialQuotaState(), claim(["a", "b"], {}, { ARQS: 1 }))).toThrow(/holds 0 accelerator requests; creating 2 more .*quota of 1/);
    const s = run(initialQuotaState(), { type: "SetLimits", data: { projectId: "p", limits: { ARQS: 2 }, at } });
    expect(run(s, claim(["a", "b"], {}, { ARQS: 1 })).usage.ARQS).toBe(2);
    const back = run(s, { type: "SetLimits", data: { projectId: "p", limits: { ARQS: null }, at } });
    expect(back.limits).toEqual({});
  });

  it("refuses a bad limit or class", () => {
    expect(() => decideQuota({ type: "SetLimits", data: { projectId: "p", limits: { GPU: -1 }, at } }, initialQuotaState())).toThrow(/whole number/);
    expect(() => decideQuota({ type: "SetLimits", data: { projectId: "p", limits: { "gpu x": 1 }, at } }, initialQuotaState())).toThrow(/resource class/);
  });
});
