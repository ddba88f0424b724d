import { describe, expect, it } from "vitest";
import { cannotProgram, livenessOf, unavailableReason, validLivenessPolicy } from "../../../src/domain/inventory/liveness.js";

const policy = { intervalS: 60, staleAfter: 3, goneAfter: 10 };
const started = "2026-03-01T10:00:00.000Z";
const after = (s: number) => new Date(Date.parse(started) + s * 1000).toISOString();

describe("agent liveness", () => {
  it("is LIVE within the stale periods of the last report, STALE after them, GONE after the gone periods", () => {
    const report = after(100);
    expect(livenessOf(report, started, after(100 + 179), policy)).toEqual({ state: "LIVE", lastReportAt: report, silentForS: 179 });
    expect(livenessOf(report, started, after(100 + 180), policy).state).toBe("STALE");
    expect(livenessOf(report, started, after(100 + 599), policy).state).toBe("STALE");
    expect(livenessOf(report, started, after(100 + 600), policy).state).toBe("GONE");
  });

  it("a host with no known report is STALE from the service's start, and GONE once the service waited the gone periods", () => {
    expect(livenessOf(null, started, started, policy)).toEqual({ state: "STALE", lastReportAt: null, silentForS: 0 });
    expect(livenessOf(null, started, after(599), policy).state).toBe("STALE");
    expect(livenessOf(null, started, after(600), policy).state).toBe("GONE");
  });

  it("programming is refused for a host known to have stopped reporting, not for one merely unheard of since the start", () => {
    expect(cannotProgram(livenessOf(after(0), started, after(200), policy))).toBe(true);
    expect(cannotProgram(livenessOf(after(0), started, after(60), policy))).toBe(false);
    expect(cannotProgram(livenessOf(null, started, after(200), policy))).toBe(false);
    expect(cannotProgram(livenessOf(null, started, after(600), policy))).toBe(true);
  });

  it("says why in words: when the last report was and how often the agent reports", () => {
    const l = livenessOf(after(0), started, after(200), policy);
    expect(unavailableReason("c1", l, policy)).toBe(`the agent of host c1 is stale: its last report was at ${after(0)}, 200 s ago (its agent reports every 60 s); start it again or check its logs`);
    expect(unavailableReason("c1", livenessOf(null, started, after(5), policy), policy)).toContain("has not reported since the service started 5 s ago");
    expect(unavailableReason("c1", livenessOf(after(0), started, after(1), policy), policy)).toBeNull();
  });

  it("a policy must be gone after stale", () => {
    expect(() => validLivenessPolicy({ intervalS: 60, staleAfter: 3, goneAfter: 3 })).toThrow(/gone \(3\) must come after stale \(3\)/);
    expect(() => validLivenessPolicy({ intervalS: 0, staleAfter: 3, goneAfter: 10 })).toThrow(RangeError);
  });
});
