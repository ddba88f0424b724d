/**
 * DutyCycle: background work that asks `pause()` between steps takes at most its share of the
 * main thread; once hurried, a pause is one turn of the event loop.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DutyCycle } from "../../src/infra/duty-cycle.js";

describe("DutyCycle", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["performance", "setTimeout", "clearTimeout"] }));
  afterEach(() => vi.useRealTimers());

  /** Whether the pause has ended once the clock moved `ms` on. */
  async function endedAfter(pause: Promise<void>, ms: number): Promise<boolean> {
    let ended = false;
    void pause.then(() => (ended = true));
    await vi.advanceTimersByTimeAsync(ms);
    return ended;
  }

  it("at a quarter, a step of 4 ms is followed by a pause of 12 ms; the next step is counted from its end", async () => {
    const cycle = new DutyCycle(0.25);
    vi.advanceTimersByTime(4);
    const pause = cycle.pause();
    expect(await endedAfter(pause, 11)).toBe(false);
    expect(await endedAfter(pause, 1)).toBe(true);
    vi.advanceTimersByTime(8);
    const next = cycle.pause();
    expect(await endedAfter(next, 23)).toBe(false);
    expect(await endedAfter(next, 1)).toBe(true);
  });

  it("hurried, it pauses for a turn of the event loop only", async () => {
    const cycle = new DutyCycle(0.25);
    vi.advanceTimersByTime(40);
    cycle.hurry();
    expect(await endedAfter(cycle.pause(), 0)).toBe(true);
  });

  it("refuses a share outside (0, 1]", () => {
    expect(() => new DutyCycle(0)).toThrow(RangeError);
    expect(() => new DutyCycle(1.5)).toThrow(RangeError);
  });
});
