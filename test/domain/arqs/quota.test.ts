import { describe, expect, it } from "vitest";
import { quotaRefusal } from "../../../src/domain/arqs/quota.js";

describe("the ARQ quota rule", () => {
  it("lets a project reach its quota exactly, and no further", () => {
    expect(quotaRefusal({ projectId: "p", held: 1, asking: 2, limit: 3 })).toBeNull();
    const refused = quotaRefusal({ projectId: "p", held: 2, asking: 2, limit: 3 });
    expect(refused?.code).toBe("QUOTA_EXCEEDED");
    expect(refused?.details).toEqual({ projectId: "p", resourceClass: "ARQS", held: 2, asking: 2, limit: 3 });
  });
  it("after a creation (asking 0), refuses only a project already past it", () => {
    expect(quotaRefusal({ projectId: "p", held: 3, asking: 0, limit: 3 })).toBeNull();
    expect(quotaRefusal({ projectId: "p", held: 4, asking: 0, limit: 3 })?.message).toMatch(/holds 4 .*that is past its quota of 3/);
  });
  it("a limit of 0 is no quota", () => {
    expect(quotaRefusal({ projectId: "p", held: 1e6, asking: 1000, limit: 0 })).toBeNull();
  });
});
