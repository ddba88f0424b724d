import { connectRedis, watchDataChanges, type RedisClient, type RedisTarget } from "../redis-client.js";
import { pipelineOf } from "./redis-pipeline.js";
import { metaKey, padPosition } from "./keys-and-cursors.js";
import type { Doc, Origin, RangeOptions, RangePage, ReadStore, Stamp, StoreDump, Write } from "./port.js";
import { dumpKeys, scanKeys } from "./redis-dump.js";
import { decodeHash, openRead, readRange, run, type Read } from "./redis-reads.js";
import { RedisBatchWriter } from "./redis-writer.js";

export interface RedisReadStoreOptions {
  /** Close the client on close() (default: true when the store made the client from a URL). */
  ownsClient?: boolean;
  /**
   * Put before every key (REDIS_KEY_PREFIX, default none): deployments sharing one Redis on
   * purpose each keep their models apart. No braces: the projection's hash tag stays the key's.
   */
  keyPrefix?: string;
}

/**
 * The production read store. Docs are Redis hashes (each field JSON), ordered indexes are sorted
 * sets, index families are a hash (member -> value) plus one sorted set per value. Reads are one
 * pipeline each (one round trip, whatever the number of keys; redis-reads.ts); a batch is one
 * script (redis-writer.ts).
 */
export class RedisReadStore implements ReadStore {
  readonly kind = "redis" as const;
  private readonly client: RedisClient;
  private readonly ownsClient: boolean;
  private readonly writer: RedisBatchWriter;
  private readonly prefix: string;
  private guardReads = false;

  /** `client`: a connection, or what to connect to (a URL: one server). */
  constructor(client: RedisClient | RedisTarget | string, options: RedisReadStoreOptions = {}) {
    const made = typeof client === "string" || "url" in client;
    const c = typeof client === "string" ? connectRedis({ url: client, cluster: false }) : "url" in client ? connectRedis(client) : client;
    this.ownsClient = options.ownsClient ?? made;
    this.client = c;
    this.prefix = checkKeyPrefix(options.keyPrefix ?? "");
    this.writer = new RedisBatchWriter(c, this.prefix);
  }

  applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void> {
    return this.writer.applyBatch(projection, writes, checkpoint, expected, origin);
  }

  async getCheckpoint(projection: string): Promise<bigint | undefined> {
    return (await this.getCheckpoints([projection]))[0];
  }

  async getCheckpoints(projections: readonly string[]): Promise<Array<bigint | undefined>> {
    if (projections.length === 0) return [];
    const p = pipelineOf(this.client);
    for (const name of projections) p.hget(this.meta(name), "checkpoint");
    return (await run<string | null>(p)).map((v) => (v === null ? undefined : BigInt(v)));
  }

  async getStamps(projections: readonly string[]): Promise<Array<Stamp | undefined>> {
    if (projections.length === 0) return [];
    const p = pipelineOf(this.client);
    for (const name of projections) p.hmget(this.meta(name), "checkpoint", "log", "event");
    return (await run<Array<string | null>>(p)).map(([cp, log, event]) => {
      if (cp == null) return undefined;
      return log != null && event != null ? { checkpoint: BigInt(cp), origin: { log, event } } : { checkpoint: BigInt(cp) };
    });
  }

  /** A server reached again after a lost connection, or on a cluster a slot served by another master (redis-client.ts). */
  watchReconnects(listener: () => void): () => void {
    return watchDataChanges(this.client, listener);
  }

  async drop(projection: string): Promise<void> {
    // After the batches already sent (one connection keeps commands in order).
    await this.writer.sent(projection);
    this.writer.resetCache(projection, false);
    for await (const batch of scanKeys(this.client, projection, this.prefix)) {
      if (batch.length > 0) await this.client.unlink(...batch);
    }
    // Nothing left: until the first batch lands, every member is known to be absent.
    this.writer.resetCache(projection, true);
  }

  async markServing(projection: string, checkpoint: bigint | null): Promise<boolean> {
    const expected = checkpoint === null ? "-" : padPosition(checkpoint);
    return (await this.client.eval(MARK_SERVING, 1, this.meta(projection), expected)) === 1;
  }

  async unmarkServing(projection: string): Promise<void> {
    await this.client.hdel(this.meta(projection), "serving");
  }

  guarded(): ReadStore {
    const view = Object.create(this) as this;
    view.guardReads = true;
    return view;
  }

  async serving(projections: readonly string[]): Promise<boolean[]> {
    if (projections.length === 0) return [];
    const p = pipelineOf(this.client);
    for (const name of projections) p.hexists(this.meta(name), "serving");
    return (await run<number>(p)).map((v) => v === 1);
  }

  async getDocs(keys: readonly string[]): Promise<Array<Doc | null>> {
    if (keys.length === 0) return [];
    const read = this.read(keys);
    for (const k of keys) read.p.hgetall(read.key(k));
    return (await read.run<Record<string, string>>()).map(decodeHash);
  }

  async getMembers(keys: readonly string[]): Promise<string[][]> {
    if (keys.length === 0) return [];
    const read = this.read(keys);
    for (const k of keys) read.p.zrange(read.key(k), "0", "-1");
    return read.run<string[]>();
  }

  async count(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const read = this.read(keys);
    for (const k of keys) read.p.zcard(read.key(k));
    return read.run<number>();
  }

  async range(keys: readonly string[], options: RangeOptions): Promise<RangePage> {
    return readRange((k) => this.read(k), keys, options);
  }

  async dump(projection: string): Promise<StoreDump> {
    const keys = await dumpKeys(this.client, projection, this.prefix);
    const cp = await this.getCheckpoint(projection);
    return { checkpoint: cp === undefined ? null : cp.toString(), keys };
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.quit().catch(() => this.client.disconnect());
  }

  /** A read's pipeline, guarded by the serving marks in the guarded() view. */
  private read(keys: readonly string[]): Read {
    return openRead(this.client, keys, this.guardReads, this.prefix);
  }

  private meta(projection: string): string {
    return this.prefix + metaKey(projection);
  }
}

/** A key prefix must leave the projection's hash tag the key's first braces. */
export function checkKeyPrefix(prefix: string): string {
  if (/[{}\s]/.test(prefix)) throw new RangeError(`a Redis key prefix holds no braces or spaces: ${JSON.stringify(prefix)}`);
  return prefix;
}

/** Marks a projection serving if its checkpoint is the one expected ('-': none). */
const MARK_SERVING = `
local cur = redis.call('HGET', KEYS[1], 'checkpoint')
if (cur == false and ARGV[1] == '-') or cur == ARGV[1] then
  redis.call('HSET', KEYS[1], 'serving', '1')
  return 1
end
return 0`;
