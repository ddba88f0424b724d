/**
 * Turns a batch of writes into the ops of the Redis apply script, as few as possible:
 *
 * - Index-family writes are resolved here, to plain sorted-set and hash writes with explicit
 *   scores: the old value of each member and its score in the order index come from an
 *   IndexCache (what this adapter wrote or read before) or from one read before the batch. The
 *   script therefore touches only declared keys and does blind writes.
 * - Blind writes on different keys commute, so writes are combined per key: every field set on a
 *   hash in the batch goes into one HSET, every member added to a sorted set into one ZADD, and
 *   so on (the last write of a field or member wins, as it would one by one). A thousand events
 *   that each file an ARQ under BIND_STARTED become one HSET on the family and one ZADD.
 */
import type { Write } from "./port.js";
import { OP, OpsWriter } from "./redis-ops.js";

interface Known<V> {
  /** Knows every member: one it has no entry for is absent. */
  complete: boolean;
  m: Map<string, V | null>;
}

/** About 100 MB: beyond, the cache starts over (and reads what it needs, batch by batch). */
const MAX_ENTRIES = 1_000_000;

/**
 * What the adapter knows of one projection's index families (member -> value) and order indexes
 * (member -> score), valid at checkpoint `validAt` only: the runner's expected-checkpoint guard
 * tells whether anyone else wrote since.
 */
export class IndexCache {
  validAt: bigint | null | undefined = undefined;
  /** After a drop the store holds nothing: every family and order index starts complete. */
  private allComplete = false;
  readonly values = new Map<string, Known<string>>();
  readonly scores = new Map<string, Known<number>>();
  /** Since the drop, sorted sets written before anything tracked them: their scores are not known. */
  private readonly writtenUntracked = new Set<string>();
  private partials = 0;
  private entries = 0;

  reset(emptyStore: boolean): void {
    this.values.clear();
    this.scores.clear();
    this.writtenUntracked.clear();
    this.partials = 0;
    this.entries = 0;
    this.allComplete = emptyStore;
    this.validAt = emptyStore ? null : undefined;
  }

  /** Knows every member of every family and order index (since a drop): nothing to read. */
  get knowsAll(): boolean {
    return this.allComplete && this.partials === 0;
  }

  /** A write to a sorted set the cache does not follow: if it follows it later, it cannot know it all. */
  written(key: string): void {
    if (this.allComplete && !this.writtenUntracked.has(key)) {
      this.writtenUntracked.add(key);
      this.entries++;
    }
  }

  value(family: string, member: string): string | null | undefined {
    const known = this.values.get(family);
    if (known) return lookup(known, member);
    return this.allComplete && !this.writtenUntracked.has(family) ? null : undefined;
  }

  score(order: string, member: string): number | null | undefined {
    const known = this.scores.get(order);
    if (known) return lookup(known, member);
    return this.allComplete && !this.writtenUntracked.has(order) ? null : undefined;
  }

  setValue(family: string, member: string, value: string | null): void {
    this.set(this.values, family, member, value);
  }

  setScore(order: string, member: string, score: number | null): void {
    this.set(this.scores, order, member, score);
  }

  /** The key was deleted: nothing is left under it. */
  cleared(key: string): void {
    for (const map of [this.values, this.scores] as Array<Map<string, Known<unknown>>>) {
      const known = map.get(key);
      if (!known) continue;
      if (this.allComplete && !known.complete) this.partials--;
      this.entries -= known.m.size;
      map.set(key, { complete: true, m: new Map() });
    }
    if (this.writtenUntracked.delete(key)) this.entries--;
  }

  tracksScores(key: string): boolean {
    return this.scores.has(key);
  }

  track(kind: "values" | "scores", key: string): void {
    const map = kind === "values" ? this.values : this.scores;
    if (map.has(key)) return;
    const complete = this.allComplete && !this.writtenUntracked.has(key);
    if (this.allComplete && !complete) this.partials++;
    map.set(key, { complete, m: new Map() });
  }

  /** Too much to remember: forget it all (later batches read what they need first). */
  get oversized(): boolean {
    return this.entries > MAX_ENTRIES;
  }

  private set<V>(maps: Map<string, Known<V>>, key: string, member: string, v: V | null): void {
    let known = maps.get(key);
    if (!known) {
      this.track(maps === this.values ? "values" : "scores", key);
      known = maps.get(key)!;
    }
    const had = known.m.has(member);
    // In a complete map an absent member needs no entry; a partial map must remember "absent".
    if (v === null && known.complete) {
      if (had) {
        known.m.delete(member);
        this.entries--;
      }
      return;
    }
    known.m.set(member, v);
    if (!had) this.entries++;
  }
}

function lookup<V>(known: Known<V>, member: string): V | null | undefined {
  const v = known.m.get(member);
  if (v !== undefined) return v;
  return known.complete ? null : undefined;
}

/**
 * Starts following the batch's families and order indexes, and lists the members whose family
 * value or order score the cache does not know: to read before compileBatch.
 */
export function unknowns(writes: readonly Write[], cache: IndexCache) {
  const values = new Map<string, Set<string>>();
  const scores = new Map<string, Set<string>>();
  for (const w of writes) {
    if (w.op !== "index") continue;
    cache.track("values", w.index);
    cache.track("scores", w.order);
  }
  if (cache.knowsAll) return { values, scores };
  const add = (map: Map<string, Set<string>>, key: string, member: string) => {
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(member);
  };
  for (const w of writes) {
    if (w.op !== "index") continue;
    if (cache.value(w.index, w.member) === undefined) add(values, w.index, w.member);
    if (w.value !== null && cache.score(w.order, w.member) === undefined) add(scores, w.order, w.member);
  }
  return { values, scores };
}

/**
 * What the batch does to one key. Most keys (a doc) get one write: it is kept as is (`first`) and
 * encoded when emitted; a second write turns the plan into sets of fields and members (the last
 * write of a field or member wins, as it would one by one).
 */
interface Plan {
  del: boolean;
  first?: Write;
  hset?: Map<string, string>;
  hdel?: Set<string>;
  zadd?: Map<string, number>;
  znx?: Map<string, number>;
  zrem?: Set<string>;
}

function setField(p: Plan, f: string, json: string): void {
  (p.hset ??= new Map()).set(f, json);
  p.hdel?.delete(f);
}

function delField(p: Plan, f: string): void {
  p.hset?.delete(f);
  if (!p.del) (p.hdel ??= new Set()).add(f);
}

function addMember(p: Plan, m: string, s: number, nx: boolean): void {
  if (nx) {
    if (p.zadd?.has(m) || p.znx?.has(m)) return;
    if (p.del || p.zrem?.has(m)) {
      p.zrem?.delete(m);
      (p.zadd ??= new Map()).set(m, s);
    } else {
      (p.znx ??= new Map()).set(m, s);
    }
    return;
  }
  p.zrem?.delete(m);
  p.znx?.delete(m);
  (p.zadd ??= new Map()).set(m, s);
}

function removeMember(p: Plan, m: string): void {
  p.zadd?.delete(m);
  p.znx?.delete(m);
  if (!p.del) (p.zrem ??= new Set()).add(m);
}

function combine(p: Plan, w: Write): void {
  switch (w.op) {
    case "put":
      for (const f in w.fields) {
        const v = w.fields[f];
        if (v !== undefined) setField(p, f, json(w.key, f, v));
      }
      return;
    case "unset":
      for (const f of w.fields) delField(p, f);
      return;
    case "zadd":
      addMember(p, w.member, w.score === 0 ? 0 : w.score, w.nx === true);
      return;
    case "zrem":
      removeMember(p, w.member);
      return;
  }
}

function json(key: string, f: string, v: unknown): string {
  if (v === null) return "null";
  const out = JSON.stringify(v);
  if (out === undefined) throw new TypeError(`field ${f} of ${key} is not JSON`);
  return out;
}

/** Most members or fields per command (Lua's unpack has a stack limit near 8,000 values). */
const CHUNK = 1000;

/**
 * Compiles the batch into KEYS and the ops of the apply script (both valid until the next call:
 * they are reused; see redis-ops.ts), with the cache as the running state (it is
 * updated as if the batch were applied; the caller resets it if the batch then fails). Call
 * `unknowns` first, and read them. Families are written only through index writes (a put on a
 * family hash is not followed). KEYS[1] is `meta`; every key must start with `prefix` (checked
 * here, before anything is sent).
 */
export function compileBatch(meta: string, writes: readonly Write[], cache: IndexCache): { keys: readonly string[]; ops: OpsWriter } {
  const prefix = meta.slice(0, meta.indexOf("}:") + 2);
  const own = (key: string) => {
    if (typeof key !== "string" || !key.startsWith(prefix) || key === meta || key.length === prefix.length) {
      throw new RangeError(`projection ${prefix} cannot write key ${JSON.stringify(key)}`);
    }
  };
  const plans = new Map<string, Plan>();
  /** Bucket key strings and value JSON, built once per batch: a Map hashes a reused string only once. */
  const buckets = new Map<string, Map<string, { key: string; json: string }>>();
  const bucket = (family: string, value: string): { key: string; json: string } => {
    let byValue = buckets.get(family);
    if (!byValue) buckets.set(family, (byValue = new Map()));
    let b = byValue.get(value);
    if (b === undefined) byValue.set(value, (b = { key: `${family}:${value}`, json: JSON.stringify(value) }));
    return b;
  };
  /** The plan of a key many writes share (families, buckets): combined from the start. */
  const shared = (key: string): Plan => {
    let p = plans.get(key);
    if (!p) plans.set(key, (p = { del: false }));
    else if (p.first) {
      combine(p, p.first);
      p.first = undefined;
    }
    return p;
  };
  const touch = (key: string, w: Write) => {
    const p = plans.get(key);
    if (!p) {
      own(key);
      plans.set(key, { del: false, first: w });
      return;
    }
    if (p.first) {
      combine(p, p.first);
      p.first = undefined;
    }
    combine(p, w);
  };

  for (const w of writes) {
    switch (w.op) {
      case "put":
      case "unset":
        // A family hash is written only through index writes (the port's contract): not followed here.
        touch(w.key, w);
        break;
      case "del":
        own(w.key);
        plans.set(w.key, { del: true });
        cache.cleared(w.key);
        break;
      case "zadd": {
        if (typeof w.member !== "string" || !Number.isFinite(w.score)) throw new RangeError(`zadd ${w.key}: bad member or score`);
        touch(w.key, w);
        if (cache.tracksScores(w.key)) {
          const had = cache.score(w.key, w.member);
          // NX on a member the cache cannot place: unknown afterwards (read again if needed).
          if (!w.nx || had === null) cache.setScore(w.key, w.member, w.score === 0 ? 0 : w.score);
          else if (had === undefined) cache.scores.get(w.key)!.m.delete(w.member);
        } else cache.written(w.key);
        break;
      }
      case "zrem":
        touch(w.key, w);
        if (cache.tracksScores(w.key)) cache.setScore(w.key, w.member, null);
        else cache.written(w.key);
        break;
      case "index": {
        own(w.index);
        own(w.order);
        if (w.value !== null && typeof w.value !== "string") throw new TypeError(`index ${w.index}: value must be a string or null`);
        const old = cache.value(w.index, w.member);
        if (old === undefined) throw new Error(`index ${w.index}: the value of ${w.member} was not read before the batch`);
        if (old === w.value) break;
        if (old !== null) removeMember(shared(bucket(w.index, old).key), w.member);
        if (w.value === null) {
          delField(shared(w.index), w.member);
        } else {
          const score = cache.score(w.order, w.member);
          if (score === undefined) throw new Error(`index ${w.index}: the score of ${w.member} was not read before the batch`);
          const b = bucket(w.index, w.value);
          addMember(shared(b.key), w.member, score ?? 0, false);
          setField(shared(w.index), w.member, b.json);
        }
        cache.setValue(w.index, w.member, w.value);
        break;
      }
      default: {
        const never: never = w;
        throw new TypeError(`unknown write ${JSON.stringify(never)}`);
      }
    }
  }

  // Reused from call to call (thousands of keys a batch): less for the GC to sweep.
  const keys = reusedKeys;
  const ops = reusedOps;
  keys.length = 0;
  ops.reset();
  keys.push(meta);
  for (const [key, p] of plans) {
    const w = p.first;
    if (w) {
      // A single write: emitted as is, without building sets.
      if (w.op === "put") {
        // One pass over the fields; a put with none (or too many for one HSET) is taken back.
        const mark = ops.mark();
        ops.uint(OP.hset);
        ops.uint(keys.length + 1);
        const count = ops.countSlot();
        let n = 0;
        for (const f in w.fields) {
          const v = w.fields[f];
          if (v === undefined) continue;
          ops.str(f);
          ops.str(json(key, f, v));
          n++;
        }
        if (n > 0 && n <= CHUNK) {
          ops.setCount(count, n);
          keys.push(key);
          continue;
        }
        ops.rewind(mark);
        if (n === 0) continue;
        combine(p, w);
      } else if (w.op === "unset" && w.fields.length > 0 && w.fields.length <= CHUNK) {
        keys.push(key);
        ops.uint(OP.hdel);
        ops.uint(keys.length);
        ops.uint(w.fields.length);
        for (const f of w.fields) ops.str(f);
        continue;
      } else if (w.op === "zadd") {
        keys.push(key);
        ops.uint(w.nx ? OP.zaddNx : OP.zadd);
        ops.uint(keys.length);
        ops.uint(1);
        ops.score(w.score === 0 ? 0 : w.score);
        ops.str(w.member);
        continue;
      } else if (w.op === "zrem") {
        keys.push(key);
        ops.uint(OP.zrem);
        ops.uint(keys.length);
        ops.uint(1);
        ops.str(w.member);
        continue;
      } else {
        combine(p, w);
      }
    }
    keys.push(key);
    const k = keys.length;
    if (p.del) {
      ops.uint(OP.del);
      ops.uint(k);
    }
    if (p.zrem?.size) emitMembers(ops, OP.zrem, k, p.zrem);
    if (p.zadd?.size) emitScored(ops, OP.zadd, k, p.zadd);
    if (p.znx?.size) emitScored(ops, OP.zaddNx, k, p.znx);
    if (p.hdel?.size) emitMembers(ops, OP.hdel, k, p.hdel);
    if (p.hset?.size) emitFields(ops, k, p.hset);
  }
  return { keys, ops };
}

/** One command per CHUNK members (ZREM, HDEL). */
function emitMembers(ops: OpsWriter, op: number, k: number, members: Set<string>): void {
  let count = -1;
  let n = 0;
  for (const m of members) {
    if (count < 0 || n === CHUNK) {
      if (count >= 0) ops.setCount(count, n);
      ops.uint(op);
      ops.uint(k);
      count = ops.countSlot();
      n = 0;
    }
    ops.str(m);
    n++;
  }
  ops.setCount(count, n);
}

/** One ZADD per CHUNK members: score member pairs. */
function emitScored(ops: OpsWriter, op: number, k: number, members: Map<string, number>): void {
  let count = -1;
  let n = 0;
  // keys() and get(): iterating entries would allocate a pair for each.
  for (const m of members.keys()) {
    if (count < 0 || n === CHUNK) {
      if (count >= 0) ops.setCount(count, n);
      ops.uint(op);
      ops.uint(k);
      count = ops.countSlot();
      n = 0;
    }
    ops.score(members.get(m)!);
    ops.str(m);
    n++;
  }
  ops.setCount(count, n);
}

/** One HSET per CHUNK fields: field value pairs. */
function emitFields(ops: OpsWriter, k: number, fields: Map<string, string>): void {
  let count = -1;
  let n = 0;
  for (const f of fields.keys()) {
    if (count < 0 || n === CHUNK) {
      if (count >= 0) ops.setCount(count, n);
      ops.uint(OP.hset);
      ops.uint(k);
      count = ops.countSlot();
      n = 0;
    }
    ops.str(f);
    ops.str(fields.get(f)!);
    n++;
  }
  ops.setCount(count, n);
}

const reusedKeys: string[] = [];
const reusedOps = new OpsWriter();
