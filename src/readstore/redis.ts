import { Redis, ReplyError } from "ioredis";
import { CheckpointMismatchError, compareEntries, decodeCursor, encodeCursor, keyPrefix, metaKey, padPosition, projectionsOfKeys, ReadStoreUnavailableError } from "./port.js";
import type { Doc, RangeItem, RangeOptions, RangePage, ReadStore, StoreDump, Write } from "./port.js";
import { ApplyCommand, BufferPool, HEADROOM } from "./redis-apply.js";
import { IndexCache, unknowns } from "./index-cache.js";
import { compileBatch } from "./redis-batch.js";

export interface RedisReadStoreOptions {
  /** Close the client on close() (default: true when the store made the client from a URL). */
  ownsClient?: boolean;
}

/**
 * The production read store. Docs are Redis hashes (each field JSON), ordered indexes are sorted
 * sets, index families are a hash (member -> value) plus one sorted set per value. Reads are one
 * pipeline each (one round trip, whatever the number of keys).
 */
export class RedisReadStore implements ReadStore {
  readonly kind = "redis" as const;
  private readonly client: Redis;
  private readonly ownsClient: boolean;
  private readonly caches = new Map<string, IndexCache>();
  private readonly buffers = new BufferPool();
  /** Per projection: resolves once the last applyBatch call has been sent. */
  private readonly lanes = new Map<string, Promise<void>>();
  private guardReads = false;

  constructor(client: Redis | string, options: RedisReadStoreOptions = {}) {
    const c = typeof client === "string" ? new Redis(client) : client;
    this.ownsClient = options.ownsClient ?? typeof client === "string";
    this.client = c;
  }

  async applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null): Promise<void> {
    padPosition(checkpoint);
    // Calls for one projection are sent in call order, even when one waits for a read first:
    // a rebuild sends batch N+1 before N is acknowledged, and N+1 must reach Redis after N.
    const previous = this.lanes.get(projection) ?? Promise.resolve();
    let markSent!: () => void;
    const sent = new Promise<void>((resolve) => (markSent = resolve));
    this.lanes.set(projection, sent);
    let reply: Promise<unknown>;
    try {
      await previous;
      ({ reply } = await this.sendBatch(projection, writes, checkpoint, expected));
    } finally {
      markSent();
      if (this.lanes.get(projection) === sent) this.lanes.delete(projection);
    }
    try {
      await reply;
    } catch (err) {
      this.cacheOf(projection).reset(false);
      const m = /CHECKPOINT_MISMATCH (\S+)/.exec((err as Error).message);
      if (!m) throw err;
      throw new CheckpointMismatchError(projection, expected, m[1] === "-" ? undefined : BigInt(m[1]!), checkpoint);
    }
  }

  /** Compiles the batch (after reading what the cache lacks) and sends it; resolves once sent. */
  private async sendBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null): Promise<{ reply: Promise<unknown> }> {
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
    const { argc, buf, end } = compiled.ops.command(compiled.keys, [guard, padPosition(checkpoint)], this.buffers.take(), HEADROOM);
    const command = new ApplyCommand(argc, buf, end);
    const reply = (this.client.sendCommand(command) as Promise<unknown>).catch((err: Error) => {
      if (!err.message.startsWith("NOSCRIPT")) throw err;
      return this.client.sendCommand(command.retry(this.client.stream));
    });
    const release = () => this.buffers.give(buf);
    reply.then(release, release);
    reply.catch(() => undefined); // awaited by applyBatch
    return { reply };
  }

  async getCheckpoint(projection: string): Promise<bigint | undefined> {
    return (await this.getCheckpoints([projection]))[0];
  }

  async getCheckpoints(projections: readonly string[]): Promise<Array<bigint | undefined>> {
    if (projections.length === 0) return [];
    const p = this.client.pipeline();
    for (const name of projections) p.hget(metaKey(name), "checkpoint");
    return (await run<string | null>(p)).map((v) => (v === null ? undefined : BigInt(v)));
  }

  async drop(projection: string): Promise<void> {
    // After the batches already sent (one connection keeps commands in order).
    await this.lanes.get(projection);
    this.cacheOf(projection).reset(false);
    for await (const batch of this.scanKeys(projection)) {
      if (batch.length > 0) await this.client.unlink(...batch);
    }
    // Nothing left: until the first batch lands, every member is known to be absent.
    this.cacheOf(projection).reset(true);
  }

  async markServing(projection: string, checkpoint: bigint | null): Promise<boolean> {
    const expected = checkpoint === null ? "-" : padPosition(checkpoint);
    return (await this.client.eval(MARK_SERVING, 1, metaKey(projection), expected)) === 1;
  }

  async unmarkServing(projection: string): Promise<void> {
    await this.client.hdel(metaKey(projection), "serving");
  }

  guarded(): ReadStore {
    const view = Object.create(this) as this;
    view.guardReads = true;
    return view;
  }

  async serving(projections: readonly string[]): Promise<boolean[]> {
    if (projections.length === 0) return [];
    const p = this.client.pipeline();
    for (const name of projections) p.hexists(metaKey(name), "serving");
    return (await run<number>(p)).map((v) => v === 1);
  }

  async getDocs(keys: readonly string[]): Promise<Array<Doc | null>> {
    if (keys.length === 0) return [];
    const read = this.read(keys);
    for (const k of keys) read.p.hgetall(k);
    return (await read.run<Record<string, string>>()).map(decodeHash);
  }

  async getMembers(keys: readonly string[]): Promise<string[][]> {
    if (keys.length === 0) return [];
    const read = this.read(keys);
    for (const k of keys) read.p.zrange(k, "0", "-1");
    return read.run<string[]>();
  }

  async count(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const read = this.read(keys);
    for (const k of keys) read.p.zcard(k);
    return read.run<number>();
  }

  /**
   * A read's pipeline. With guardReads, the serving marks of the keys' projections are asked first,
   * in the same round trip, and a store that is not connected is refused at once (no read waits in
   * ioredis's offline queue while Redis is down).
   */
  private read(keys: readonly string[]) {
    const names = this.guardReads ? projectionsOfKeys(keys) : [];
    if (this.guardReads && this.client.status !== "ready") throw new ReadStoreUnavailableError(names, `Redis is ${this.client.status}`);
    const p = this.client.pipeline();
    for (const n of names) p.hexists(metaKey(n), "serving");
    return {
      p,
      run: async <T>(): Promise<T[]> => {
        let replies: unknown[];
        try {
          replies = await run<unknown>(p);
        } catch (err) {
          if (err instanceof ReplyError) throw err;
          throw new ReadStoreUnavailableError(names, `Redis: ${(err as Error).message}`);
        }
        const missing = names.filter((_, i) => replies[i] !== 1);
        if (missing.length) throw new ReadStoreUnavailableError(missing, `${missing.join(", ")} not serving`);
        return replies.slice(names.length) as T[];
      },
    };
  }

  async range(keys: readonly string[], options: RangeOptions): Promise<RangePage> {
    if (keys.length === 0) throw new RangeError("range needs at least one key");
    const after = options.after === undefined ? undefined : decodeCursor(options.after);
    const limit = Math.max(0, options.limit);
    if (keys.length > 1) return this.rangeIntersection(keys, after, limit);
    const key = keys[0]!;
    const read = this.read(keys);
    const p = read.p;
    if (after) {
      const s = String(after.score);
      p.zrange(key, s, s, "BYSCORE"); // ties with the cursor's score: keep those after its member
      p.zrange(key, `(${s}`, "+inf", "BYSCORE", "LIMIT", 0, limit + 1, "WITHSCORES");
    } else {
      p.zrange(key, "0", String(limit), "WITHSCORES");
    }
    p.zcard(key);
    const replies = await read.run<unknown>();
    const total = replies.at(-1) as number;
    let entries: Array<[string, number]>;
    if (after) {
      const ties = (replies[0] as string[])
        .filter((m) => compareEntries(after.score, m, after.score, after.member) > 0)
        .map((m): [string, number] => [m, after.score]);
      entries = [...ties, ...pairs(replies[1])];
    } else {
      entries = pairs(replies[0]);
    }
    return page(entries, limit, total);
  }

  private async rangeIntersection(keys: readonly string[], after: { score: number; member: string } | undefined, limit: number) {
    const weights = keys.map((_, i) => (i === 0 ? "1" : "0"));
    const read = this.read(keys);
    read.p.call("ZINTER", keys.length, ...keys, "WEIGHTS", ...weights, "AGGREGATE", "SUM", "WITHSCORES");
    const all = pairs((await read.run<unknown>())[0]);
    const rest = after ? all.filter(([m, s]) => compareEntries(s, m, after.score, after.member) > 0) : all;
    return page(rest, limit, all.length);
  }

  async dump(projection: string): Promise<StoreDump> {
    const meta = metaKey(projection);
    const names: string[] = [];
    for await (const batch of this.scanKeys(projection)) names.push(...batch.filter((k) => k !== meta));
    names.sort();
    const types = names.length ? await run<string>(names.reduce((p, k) => p.type(k), this.client.pipeline())) : [];
    const p = this.client.pipeline();
    names.forEach((k, i) => (types[i] === "hash" ? p.hgetall(k) : p.zrange(k, "0", "-1", "WITHSCORES")));
    const values = names.length ? await run<unknown>(p) : [];
    const keys: StoreDump["keys"] = {};
    names.forEach((k, i) => {
      if (types[i] === "hash") {
        const doc = decodeHash(values[i] as Record<string, string>) ?? {};
        const hash: Record<string, unknown> = {};
        for (const f of Object.keys(doc).sort()) hash[f] = doc[f];
        keys[k] = { hash };
      } else {
        keys[k] = { zset: pairs(values[i]) };
      }
    });
    const cp = await this.getCheckpoint(projection);
    return { checkpoint: cp === undefined ? null : cp.toString(), keys };
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.quit().catch(() => this.client.disconnect());
  }

  private async *scanKeys(projection: string): AsyncGenerator<string[]> {
    const match = `${keyPrefix(projection)}*`;
    let cursor = "0";
    do {
      const [next, keys] = await this.client.scan(cursor, "MATCH", match, "COUNT", 1000);
      cursor = next;
      yield keys;
    } while (cursor !== "0");
  }

  private cacheOf(projection: string): IndexCache {
    let cache = this.caches.get(projection);
    if (!cache) this.caches.set(projection, (cache = new IndexCache()));
    return cache;
  }

  /** Reads, in one round trip, the family values and order scores the cache lacks. */
  private async readUnknowns(need: ReturnType<typeof unknowns>, cache: IndexCache): Promise<void> {
    const p = this.client.pipeline();
    const asked: Array<[kind: "value" | "score", key: string, members: string[]]> = [];
    for (const [family, members] of need.values) {
      const list = [...members];
      asked.push(["value", family, list]);
      p.hmget(family, ...list);
    }
    for (const [order, members] of need.scores) {
      const list = [...members];
      asked.push(["score", order, list]);
      p.zmscore(order, ...list);
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

/** Marks a projection serving if its checkpoint is the one expected ('-': none). */
const MARK_SERVING = `
local cur = redis.call('HGET', KEYS[1], 'checkpoint')
if (cur == false and ARGV[1] == '-') or cur == ARGV[1] then
  redis.call('HSET', KEYS[1], 'serving', '1')
  return 1
end
return 0`;

async function run<T>(p: ReturnType<Redis["pipeline"]>): Promise<T[]> {
  const results = (await p.exec()) ?? [];
  return results.map(([err, value]) => {
    if (err) throw err;
    return value as T;
  });
}

function decodeHash(raw: Record<string, string> | null | undefined): Doc | null {
  if (!raw) return null;
  const fields = Object.keys(raw);
  if (fields.length === 0) return null;
  const doc: Doc = {};
  for (const f of fields) doc[f] = JSON.parse(raw[f]!);
  return doc;
}

/** WITHSCORES replies come flat ([m, s, m, s]) or, from a raw RESP3 call, as pairs. */
function pairs(reply: unknown): Array<[string, number]> {
  const list = reply as unknown[];
  const out: Array<[string, number]> = [];
  if (list.length > 0 && Array.isArray(list[0])) {
    for (const [m, s] of list as Array<[string, string | number]>) out.push([m, Number(s)]);
  } else {
    for (let i = 0; i < list.length; i += 2) out.push([list[i] as string, Number(list[i + 1])]);
  }
  return out;
}

function page(entries: Array<[string, number]>, limit: number, total: number): RangePage {
  const items: RangeItem[] = entries.slice(0, limit).map(([member, score]) => ({ member, score, cursor: encodeCursor(score, member) }));
  return { items, total, hasMore: entries.length > limit };
}
