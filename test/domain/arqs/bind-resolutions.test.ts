/** Given ARQ events in log order, then these are the binds they resolve (and nothing else). */
import { describe, expect, it } from "vitest";
import { BindResolutions, type BindResolution } from "../../../src/domain/arqs/bind-resolutions.js";
import type { ArqEvent } from "../../../src/domain/events.js";
import { arqCreated, arqDeleted, bindFailed, bindStarted, bound, unbound } from "../../projections/support.js";

const feed = (t: BindResolutions, events: readonly unknown[]) => (events as ArqEvent[]).map((e) => t.next(e)).filter((r): r is BindResolution => r !== null);
const brief = (r: BindResolution) => `${r.arqUuid} ${r.status} ${r.instanceUuid}${r.reason ? ` (${r.reason})` : ""}`;

describe("bind resolutions", () => {
  it("a bind resolves when BIND_STARTED becomes BOUND or BIND_FAILED, once per bind", () => {
    const t = new BindResolutions();
    const out = feed(t, [
      arqCreated("a1"),
      bindStarted("a1", "h1", "i1"),
      bound("a1", { instance: "i1" }),
      arqCreated("a2"),
      bindStarted("a2", "h1", "i2"),
      bindFailed("a2", "no free attach handle", "i2"),
      // A second failure, and unbind -> bind again (a new bind of a1).
      bindFailed("a2", "again", "i2"),
      unbound("a1"),
      bindStarted("a1", "h1", "i3"),
      bound("a1", { instance: "i3" }),
    ]);
    expect(out.map(brief)).toEqual(["a1 COMPLETED i1", "a2 FAILED i2 (no free attach handle)", "a1 COMPLETED i3"]);
    expect(t.binds).toBe(0);
  });

  it("BOUND -> BIND_FAILED (the device was lost) resolves nothing", () => {
    const t = new BindResolutions();
    expect(feed(t, [bindStarted("a1", "h1", "i1"), bound("a1", { instance: "i1" }), bindFailed("a1", "device lost", "i1")]).map(brief)).toEqual(["a1 COMPLETED i1"]);
  });

  it("an ARQ unbound or deleted while binding is no longer binding", () => {
    const t = new BindResolutions();
    expect(feed(t, [bindStarted("a1"), unbound("a1"), bindFailed("a1"), bindStarted("a2"), arqDeleted("a2"), bindFailed("a2")])).toEqual([]);
  });

  it("names the failures whose start it has not seen, and resolves them once told", () => {
    const t = new BindResolutions();
    const batch = [bindFailed("late", "timeout", null), bindFailed("lost", "device lost"), bindStarted("fresh"), bindFailed("fresh"), bound("b")] as ArqEvent[];
    // Only the first event of each ARQ counts: "fresh" starts inside the batch.
    expect(t.mustLearn(batch).map((e) => e.data.arqUuid)).toEqual(["late", "lost"]);
    expect(t.mustLearn(batch, (e) => e.data.arqUuid !== "lost").map((e) => e.data.arqUuid)).toEqual(["late"]);
    // What the follower found out: "late" was binding for i9, "lost" was BOUND.
    t.learnBinding("late", "i9");
    expect(feed(t, batch).map(brief)).toEqual(["late FAILED i9 (timeout)", "fresh FAILED inst-1 (no free attach handle)", "b COMPLETED inst-1"]);
  });

  it("forgets everything on clear (a follower that starts over)", () => {
    const t = new BindResolutions();
    feed(t, [bindStarted("a1")]);
    expect(t.mustLearn([bindFailed("a1")] as ArqEvent[])).toEqual([]);
    t.clear();
    expect(t.mustLearn([bindFailed("a1")] as ArqEvent[])).toHaveLength(1);
    expect(feed(t, [bindFailed("a1")])).toEqual([]);
  });
});
