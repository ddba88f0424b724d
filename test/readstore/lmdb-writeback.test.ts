/** The LMDB read store's background sync (lmdb-writeback.ts): every interval while it takes writes, one at a time, none when idle. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SteadyWriteback } from "../../src/infra/readstore/lmdb-writeback.js";

afterEach(() => vi.useRealTimers());

describe("a store's steady writeback", () => {
  it("syncs at the next tick after writes, not while idle, and never two at once", async () => {
    vi.useFakeTimers();
    const done: Array<() => void> = [];
    const sync = vi.fn(() => new Promise<void>((resolve) => done.push(resolve)));
    const w = new SteadyWriteback(sync, 500);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(sync).not.toHaveBeenCalled(); // nothing written

    w.written();
    await vi.advanceTimersByTimeAsync(500);
    expect(sync).toHaveBeenCalledTimes(1);
    w.written(); // written again while that sync is under way: it waits for it
    await vi.advanceTimersByTimeAsync(1_500);
    expect(sync).toHaveBeenCalledTimes(1);
    done.shift()!();
    await vi.advanceTimersByTimeAsync(500);
    expect(sync).toHaveBeenCalledTimes(2);
    done.shift()!();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(sync).toHaveBeenCalledTimes(2); // idle again

    w.written();
    const stopped = w.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    await stopped;
    expect(sync).toHaveBeenCalledTimes(2); // stopped: the store's close syncs instead
  });

  it("a failed sync is left for the next one", async () => {
    vi.useFakeTimers();
    const sync = vi.fn().mockRejectedValueOnce(new Error("EIO")).mockResolvedValue(undefined);
    const w = new SteadyWriteback(sync, 500);
    w.written();
    await vi.advanceTimersByTimeAsync(500);
    w.written();
    await vi.advanceTimersByTimeAsync(500);
    expect(sync).toHaveBeenCalledTimes(2);
    await w.stop();
  });
});
