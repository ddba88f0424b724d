/**
 * Read-your-writes across API workers: the worker that took a mutation waits until every serving
 * worker's read models reach its position, through the primary (channels here are in-memory
 * pairs standing in for node:cluster's IPC).
 */
import { describe, expect, it } from "vitest";
import { everyWorkerAt, PositionRelay } from "../../src/infra/cluster/every-worker.js";
import type { Channel } from "../../src/infra/cluster/messages.js";
import { channelPair } from "./channel-pair.js";

/** A worker whose models reach a position when the test says so. */
function worker(relay: PositionRelay, serving: Set<Channel>) {
  const [mine, primarySide] = channelPair();
  serving.add(primarySide);
  primarySide.onMessage((msg) => {
    if (msg.cyborg === "await") relay.asked(primarySide, msg);
    else if (msg.cyborg === "reached") relay.answered(primarySide, msg.id);
  });
  let at = 0n;
  const waiters: Array<{ position: bigint; resolve: () => void }> = [];
  const reach = (position: bigint) => (at >= position ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ position, resolve })));
  return {
    primarySide,
    everyWorker: everyWorkerAt(mine, reach),
    moveTo(position: bigint) {
      at = position;
      for (const w of waiters.splice(0)) if (w.position <= at) w.resolve();
    },
  };
}

describe("every worker at a position", () => {
  it("waits for the slowest serving worker, and not for one that is gone", async () => {
    const serving = new Set<Channel>();
    const relay = new PositionRelay(() => serving);
    const a = worker(relay, serving);
    const b = worker(relay, serving);
    const c = worker(relay, serving);
    a.moveTo(10n);
    let done = false;
    const wait = a.everyWorker(10n).then(() => (done = true));
    b.moveTo(10n);
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    // c dies before it reaches 10: the question no longer waits for it.
    serving.delete(c.primarySide);
    relay.answered(c.primarySide);
    await wait;
    expect(done).toBe(true);
  });

  it("answers once the last worker reaches the position", async () => {
    const serving = new Set<Channel>();
    const relay = new PositionRelay(() => serving);
    const a = worker(relay, serving);
    const b = worker(relay, serving);
    a.moveTo(5n);
    let done = false;
    const wait = a.everyWorker(5n).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    b.moveTo(7n);
    await wait;
    expect(done).toBe(true);
  });
});
