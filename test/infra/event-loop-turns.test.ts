/**
 * EventLoopTurns: a caller holding the loop with synchronous work asks `pause()` between steps; it
 * resolves at once until the loop has been held `holdMs` (4 by default), then at the next turn.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EventLoopTurns } from "../../src/infra/event-loop-turns.js";

/** Whether `pause()` let an immediate scheduled before it run, i.e. waited for a turn of the loop. */
async function turned(turns: EventLoopTurns): Promise<boolean> {
  let ran = false;
  const immediate = setImmediate(() => (ran = true));
  await turns.pause();
  clearImmediate(immediate);
  return ran;
}

describe("EventLoopTurns", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["performance"] }));
  afterEach(() => vi.useRealTimers());

  it("gives no turn while the loop was held less than 4 ms, then one, and counts again from it", async () => {
    const turns = new EventLoopTurns();
    vi.advanceTimersByTime(3);
    expect(await turned(turns)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await turned(turns)).toBe(true);
    // Held from that turn on: again 4 ms before the next.
    vi.advanceTimersByTime(3);
    expect(await turned(turns)).toBe(false);
    vi.advanceTimersByTime(2);
    expect(await turned(turns)).toBe(true);
  });

  it("holds as long as it is told", async () => {
    const turns = new EventLoopTurns(50);
    vi.advanceTimersByTime(49);
    expect(await turned(turns)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await turned(turns)).toBe(true);
  });
});
