/**
 * The read side of the Redis read store: one pipeline per read (one round trip, whatever the
 * number of keys), guarded by the serving marks when asked, and the decoding of its replies.
 */
import { ReplyError } from "ioredis";
import type { RedisClient as Redis } from "../redis-client.js";
import { pipelineOf, type Pipeline } from "./redis-pipeline.js";
import { ReadStoreUnavailableError } from "./port.js";
import { compareEntries, decodeCursor, encodeCursor, metaKey, projectionsOfKeys, setDocField } from "./keys-and-cursors.js";
import type { Doc, RangeItem, RangeOptions, RangePage } from "./port.js";


export interface Read {
  p: Pipeline;
  /** A key as Redis names it (behind the store's prefix). */
  key(k: string): string;
  run<T>(): Promise<T[]>;
}

/**
 * A read's pipeline. With `guard`, the serving marks of the keys' projections are asked first,
 * in the same round trip, and a store that is not connected is refused at once (no read waits in
 * ioredis's offline queue while Redis is down).
 */
export function openRead(client: Redis, keys: readonly string[], guard: boolean, prefix = ""): Read {
  const names = guard ? projectionsOfKeys(keys) : [];
  if (guard && client.status !== "ready") throw new ReadStoreUnavailableError(names, `Redis is ${client.status}`);
  const p = pipelineOf(client);
  for (const n of names) p.hexists(prefix + metaKey(n), "serving");
  return {
    p,
    key: prefix === "" ? (k) => k : (k) => prefix + k,
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

/** ReadStore.range: one sorted set read by score from a cursor, or the intersection of several. */
export async function readRange(open: (keys: readonly string[]) => Read, keys: readonly string[], options: RangeOptions): Promise<RangePage> {
  if (keys.length === 0) throw new RangeError("range needs at least one key");
  const after = options.after === undefined ? undefined : decodeCursor(options.after);
  const limit = Math.max(0, options.limit);
  const until = options.until;
  if (keys.length > 1) return rangeIntersection(open(keys), keys, after, limit, until);
  const read = open(keys);
  const key = read.key(keys[0]!);
  const p = read.p;
  const max = until === undefined ? "+inf" : String(until);
  if (after) {
    const s = String(after.score);
    p.zrange(key, s, s, "BYSCORE"); // ties with the cursor's score: keep those after its member
    p.zrange(key, `(${s}`, max, "BYSCORE", "LIMIT", 0, limit + 1, "WITHSCORES");
  } else if (until === undefined) {
    p.zrange(key, "0", String(limit), "WITHSCORES");
  } else {
    p.zrange(key, "-inf", max, "BYSCORE", "LIMIT", 0, limit + 1, "WITHSCORES");
  }
  if (until === undefined) p.zcard(key);
  else p.zcount(key, "-inf", max);
  const replies = await read.run<unknown>();
  const total = replies.at(-1) as number;
  let entries: Array<[string, number]>;
  if (after) {
    const ties = (replies[0] as string[])
      .filter((m) => compareEntries(after.score, m, after.score, after.member) > 0 && (until === undefined || after.score <= until))
      .map((m): [string, number] => [m, after.score]);
    entries = [...ties, ...pairs(replies[1])];
  } else {
    entries = pairs(replies[0]);
  }
  return page(entries, limit, total);
}

async function rangeIntersection(read: Read, keys: readonly string[], after: { score: number; member: string } | undefined, limit: number, until: number | undefined) {
  const weights = keys.map((_, i) => (i === 0 ? "1" : "0"));
  read.p.call("ZINTER", keys.length, ...keys.map(read.key), "WEIGHTS", ...weights, "AGGREGATE", "SUM", "WITHSCORES");
  const found = pairs((await read.run<unknown>())[0]);
  const all = until === undefined ? found : found.filter(([, s]) => s <= until);
  const rest = after ? all.filter(([m, s]) => compareEntries(s, m, after.score, after.member) > 0) : all;
  return page(rest, limit, all.length);
}

export async function run<T>(p: Pipeline): Promise<T[]> {
  const results = (await p.exec()) ?? [];
  return results.map(([err, value]) => {
    if (err) throw err;
    return value as T;
  });
}

export function decodeHash(raw: Record<string, string> | null | undefined): Doc | null {
  if (!raw) return null;
  const fields = Object.keys(raw);
  if (fields.length === 0) return null;
  const doc: Doc = {};
  for (const f of fields) setDocField(doc, f, JSON.parse(raw[f]!));
  return doc;
}

/** WITHSCORES replies come flat ([m, s, m, s]) or, from a raw RESP3 call, as pairs. */
export function pairs(reply: unknown): Array<[string, number]> {
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
