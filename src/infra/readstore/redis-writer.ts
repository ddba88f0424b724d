/**
 * The write side of the Redis read store: a batch is compiled against what the index cache knows
 * (redis-batch.ts, after one read of what it lacks) and sent as one apply script (redis-apply.ts).
 */
import type { RedisClient as Redis } from "../redis-client.js";
import { CheckpointMismatchError, type Origin, type Write } from "./port.js";
import { metaKey, padPosition } from "./keys-and-cursors.js";
import { ApplyCommand, BufferPool, HEADROOM } from "./redis-apply.js";
import { IndexCache, unknowns } from "./index-cache.js";
import { compileBatch } from "./redis-batch.js";
import { pipelineOf } from "./redis-pipeline.js";
import { run } from "./redis-reads.js";

export class RedisBatchWriter {
  private readonly caches = new Map<string, IndexCache>();
  private readonly buffers = new BufferPool();
  /** Per projection: resolves once the last applyBatch call has been sent. */
  private readonly lanes = new Map<string, Promise<void>>();

  constructor(
    private readonly client: Redis,
    /** Put before every key (REDIS_KEY_PREFIX). */
    private readonly keyPrefix = "",
  ) {}

  /**
   * Not async itself: the writes (and the events they hold) are let go once the batch is sent,
   * not when Redis answers. A rebuild keeps batches in flight, and what lives that long is copied
   * by every scavenge.
   */
  applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void> {
    return this.sendInLane(projection, writes, checkpoint, expected, origin).then(({ reply }) => this.answered(projection, reply, checkpoint, expected));
  }

  /** Sends the batch after the projection's batches asked for before; resolves (with the reply to come) once sent. */
  private async sendInLane(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<{ reply: Promise<unknown> }> {
    padPosition(checkpoint);
    // Calls for one projection are sent in call order, even when one waits for a read first:
    // a rebuild sends batch N+1 before N is acknowledged, and N+1 must reach Redis after N.
    const previous = this.lanes.get(projection) ?? Promise.resolve();
    let markSent!: () => void;
    const sent = new Promise<void>((resolve) => (markSent = resolve));
    this.lanes.set(projection, sent);
    try {
      await previous;
      return await this.sendBatch(projection, writes, checkpoint, expected, origin);
    } finally {
      markSent();
      if (this.lanes.get(projection) === sent) this.lanes.delete(projection);
    }
  }

  private async answered(projection: string, reply: Promise<unknown>, checkpoint: bigint, expected?: bigint | null): Promise<void> {
    try {
      await reply;
    } catch (err) {
      this.cacheOf(projection).reset(false);
      const m = /CHECKPOINT_MISMATCH (\S+)/.exec((err as Error).message);
      if (!m) throw err;
      throw new CheckpointMismatchError(projection, expected, m[1] === "-" ? undefined : BigInt(m[1]!), checkpoint);
    }
  }

  /** Resolves once the batches of the projection already asked for are sent (one connection keeps commands in order). */
  async sent(projection: string): Promise<void> {
    await this.lanes.get(projection);
  }

  /** Forgets what the cache knows of the projection; `empty`: it holds nothing now, so every member is known to be absent. */
  resetCache(projection: string, empty: boolean): void {
    this.cacheOf(projection).reset(empty);
  }

  /** Compiles the batch (after reading what the cache lacks) and sends it; resolves once sent. */
  private async sendBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<{ reply: Promise<unknown> }> {
    const cache = this.cacheOf(projection);
    // The cache is valid only if nobody wrote since it was built: the guard says so.
    if (expected === undefined || cache.validAt !== expected) cache.reset(false);
    const need = unknowns(writes, cache);
    if (need.values.size > 0 || need.scores.size > 0) await this.readUnknowns(need, cache);
    let compiled: ReturnType<typeof compileBatch>;
    try {
      compiled = compileBatch(metaKey(projection), writes, cache);
    } catch (err) {
      cache.reset(false);
      throw err;
    }
    cache.validAt = checkpoint;
    if (cache.oversized) cache.reset(false);
    const guard = expected === undefined ? "*" : expected === null ? "-" : padPosition(expected);
    const { argc, buf, end } = compiled.ops.command(compiled.keys, [guard, padPosition(checkpoint), origin?.log ?? "", origin?.event ?? ""], this.buffers.take(), HEADROOM, this.keyPrefix);
    const command = new ApplyCommand(argc, buf, end, this.keyPrefix + metaKey(projection));
    const reply = (this.client.sendCommand(command) as Promise<unknown>).catch((err: Error) => {
      if (!err.message.startsWith("NOSCRIPT")) throw err;
      return this.client.sendCommand(command.retry());
    });
    const release = () => this.buffers.give(buf);
    reply.then(release, release);
    reply.catch(() => undefined); // awaited by applyBatch
    return { reply };
  }

  private cacheOf(projection: string): IndexCache {
    let cache = this.caches.get(projection);
    if (!cache) this.caches.set(projection, (cache = new IndexCache()));
    return cache;
  }

  /** Reads, in one round trip, the family values and order scores the cache lacks. */
  private async readUnknowns(need: ReturnType<typeof unknowns>, cache: IndexCache): Promise<void> {
    const p = pipelineOf(this.client);
    const asked: Array<[kind: "value" | "score", key: string, members: string[]]> = [];
    for (const [family, members] of need.values) {
      const list = [...members];
      asked.push(["value", family, list]);
      p.hmget(this.keyPrefix + family, ...list);
    }
    for (const [order, members] of need.scores) {
      const list = [...members];
      asked.push(["score", order, list]);
      p.zmscore(this.keyPrefix + order, ...list);
    }
    const replies = await run<Array<string | number | null>>(p);
    asked.forEach(([kind, key, list], i) => {
      list.forEach((m, j) => {
        const raw = replies[i]![j];
        const known = raw === null || raw === undefined ? null : raw;
        if (kind === "value") cache.setValue(key, m, known === null ? null : (JSON.parse(String(known)) as string));
        else cache.setScore(key, m, known === null ? null : Number(known));
      });
    });
  }
}
