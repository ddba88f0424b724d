/**
 * Read-your-writes across API workers: a mutation answers once every worker's read models show
 * its writes, so that the client's next request sees them whichever worker takes it (as with one
 * process). The worker that took the mutation asks the primary, which asks every worker and
 * answers when all have.
 */
import type { AwaitPosition, Channel } from "./messages.js";

/** The worker's side: `reach` waits for this worker's models; the result waits for every worker's. */
export function everyWorkerAt(channel: Channel, reach: (position: bigint) => Promise<void>): (position: bigint) => Promise<void> {
  let nextId = 1;
  const pending = new Map<number, () => void>();
  channel.onMessage((msg) => {
    if (msg.cyborg === "reach") {
      const answer = () => channel.send({ cyborg: "reached", id: msg.id });
      // A model that lags past its wait is the asking mutation's to log; the answer goes anyway.
      reach(msg.position).then(answer, answer);
    } else if (msg.cyborg === "awaited") {
      pending.get(msg.id)?.();
      pending.delete(msg.id);
    }
  });
  channel.onClose(() => {
    for (const done of pending.values()) done();
    pending.clear();
  });
  return (position) =>
    new Promise<void>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      channel.send({ cyborg: "await", id, position });
    });
}

/** The primary's side: asks every worker in `workers()` to reach the position, and answers the one that asked. */
export class PositionRelay {
  private nextId = 1;
  /** Per relayed question: the workers that have not answered yet, and the answer to send. */
  private readonly open = new Map<number, { waiting: Set<Channel>; done: () => void }>();

  constructor(private readonly workers: () => Iterable<Channel>) {}

  /** A worker asked (`await`). */
  asked(from: Channel, msg: AwaitPosition): void {
    const id = this.nextId++;
    const waiting = new Set(this.workers());
    const done = () => from.send({ cyborg: "awaited", id: msg.id });
    if (waiting.size === 0) return done();
    this.open.set(id, { waiting, done });
    for (const w of waiting) w.send({ cyborg: "reach", id, position: msg.position });
  }

  /** A worker answered (`reached`), or is gone (`id` undefined: every question it had). */
  answered(from: Channel, id?: number): void {
    for (const [key, q] of id === undefined ? [...this.open] : [[id, this.open.get(id)] as const]) {
      if (!q) continue;
      q.waiting.delete(from);
      if (q.waiting.size === 0) {
        this.open.delete(key);
        q.done();
      }
    }
  }
}
