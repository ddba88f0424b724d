/** Given whether an ARQ was binding and the next event of the log, then whether it is binding. */
import { describe, expect, it } from "vitest";
import { bindingAfter } from "../../../src/domain/arqs/bind-resolutions.js";

describe("bindingAfter", () => {
  it("a bind starts with ArqBindStarted, from any state", () => {
    expect(bindingAfter({ type: "ArqBindStarted" }, false)).toBe(true);
    expect(bindingAfter({ type: "ArqBindStarted" }, true)).toBe(true);
  });

  it("ArqBound completes it; a failure, an unbind or a delete ends it; a created ARQ is not binding", () => {
    for (const type of ["ArqCreated", "ArqBound", "ArqBindFailed", "ArqUnbound", "ArqDeleted"]) {
      expect(bindingAfter({ type }, true)).toBe(false);
      expect(bindingAfter({ type }, false)).toBe(false);
    }
  });

  it("any other event leaves the ARQ as it was", () => {
    for (const type of ["AttachHandleLost", "DeviceLost", "RegionProgrammed"]) {
      expect(bindingAfter({ type }, true)).toBe(true);
      expect(bindingAfter({ type }, false)).toBe(false);
    }
  });
});
