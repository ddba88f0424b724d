/**
 * Turns a batch of writes into the ops of the Redis apply script, as few as possible:
 *
 * - Index-family writes are resolved here, to plain sorted-set and hash writes with explicit
 *   scores: the old value of each member and its score in the order index come from an
 *   IndexCache (what this adapter wrote or read before) or from one read before the batch. The
 *   script therefore touches only declared keys and does blind writes.
 * - Writes are combined per key (batch-plan.ts). A thousand events that each file an ARQ under
 *   BIND_STARTED become one HSET on the family and one ZADD.
 */
import { addMember, combine, delField, json, removeMember, setField, type Plan } from "./batch-plan.js";
import type { IndexCache } from "./index-cache.js";
import type { Write } from "./port.js";
import { OP, OpsWriter } from "./redis-ops.js";

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
  const batch: BatchPlans = { meta, prefix: meta.slice(0, meta.indexOf("}:") + 2), plans: new Map(), buckets: new Map() };
  for (const w of writes) planWrite(batch, w, cache);
  return emitPlans(meta, batch.plans);
}

/** The plans of one batch, per key, and what building them needs. */
interface BatchPlans {
  readonly meta: string;
  readonly prefix: string;
  readonly plans: Map<string, Plan>;
  /** Bucket key strings and value JSON, built once per batch: a Map hashes a reused string only once. */
  readonly buckets: Map<string, Map<string, { key: string; json: string }>>;
}

function checkOwnKey(batch: BatchPlans, key: string): void {
  const { prefix, meta } = batch;
  if (typeof key !== "string" || !key.startsWith(prefix) || key === meta || key.length === prefix.length) {
    throw new RangeError(`projection ${prefix} cannot write key ${JSON.stringify(key)}`);
  }
}

function bucketOf(batch: BatchPlans, family: string, value: string): { key: string; json: string } {
  let byValue = batch.buckets.get(family);
  if (!byValue) batch.buckets.set(family, (byValue = new Map()));
  let b = byValue.get(value);
  if (b === undefined) byValue.set(value, (b = { key: `${family}:${value}`, json: JSON.stringify(value) }));
  return b;
}

/** The plan of a key many writes share (families, buckets): combined from the start. */
function sharedPlan(plans: Map<string, Plan>, key: string): Plan {
  let p = plans.get(key);
  if (!p) plans.set(key, (p = { del: false }));
  else if (p.first) {
    combine(p, p.first);
    p.first = undefined;
  }
  return p;
}

function touchPlan(batch: BatchPlans, key: string, w: Write): void {
  const p = batch.plans.get(key);
  if (!p) {
    checkOwnKey(batch, key);
    batch.plans.set(key, { del: false, first: w });
    return;
  }
  if (p.first) {
    combine(p, p.first);
    p.first = undefined;
  }
  combine(p, w);
}

/** Adds one write to the plans of its keys, and updates the cache as if it were applied. */
function planWrite(batch: BatchPlans, w: Write, cache: IndexCache): void {
  switch (w.op) {
    case "put":
    case "unset":
      // A family hash is written only through index writes (the port's contract): not followed here.
      touchPlan(batch, w.key, w);
      break;
    case "del":
      checkOwnKey(batch, w.key);
      batch.plans.set(w.key, { del: true });
      cache.cleared(w.key);
      break;
    case "zadd": {
      if (typeof w.member !== "string" || !Number.isFinite(w.score)) throw new RangeError(`zadd ${w.key}: bad member or score`);
      touchPlan(batch, w.key, w);
      if (cache.tracksScores(w.key)) {
        const had = cache.score(w.key, w.member);
        // NX on a member the cache cannot place: unknown afterwards (read again if needed).
        if (!w.nx || had === null) cache.setScore(w.key, w.member, w.score === 0 ? 0 : w.score);
        else if (had === undefined) cache.scores.get(w.key)!.m.delete(w.member);
      } else cache.written(w.key);
      break;
    }
    case "zrem":
      touchPlan(batch, w.key, w);
      if (cache.tracksScores(w.key)) cache.setScore(w.key, w.member, null);
      else cache.written(w.key);
      break;
    case "index":
      planIndexWrite(batch, w, cache);
      break;
    default: {
      const never: never = w;
      throw new TypeError(`unknown write ${JSON.stringify(never)}`);
    }
  }
}

/** An index write, resolved to plain writes on the family hash and the value buckets. */
function planIndexWrite(batch: BatchPlans, w: Extract<Write, { op: "index" }>, cache: IndexCache): void {
  checkOwnKey(batch, w.index);
  checkOwnKey(batch, w.order);
  if (w.value !== null && typeof w.value !== "string") throw new TypeError(`index ${w.index}: value must be a string or null`);
  const old = cache.value(w.index, w.member);
  if (old === undefined) throw new Error(`index ${w.index}: the value of ${w.member} was not read before the batch`);
  if (old === w.value) return;
  const { plans } = batch;
  if (old !== null) removeMember(sharedPlan(plans, bucketOf(batch, w.index, old).key), w.member);
  if (w.value === null) {
    delField(sharedPlan(plans, w.index), w.member);
  } else {
    const score = cache.score(w.order, w.member);
    if (score === undefined) throw new Error(`index ${w.index}: the score of ${w.member} was not read before the batch`);
    const b = bucketOf(batch, w.index, w.value);
    addMember(sharedPlan(plans, b.key), w.member, score ?? 0, false);
    setField(sharedPlan(plans, w.index), w.member, b.json);
  }
  cache.setValue(w.index, w.member, w.value);
}

/** KEYS and ops for the plans, `meta` first. */
function emitPlans(meta: string, plans: Map<string, Plan>): { keys: readonly string[]; ops: OpsWriter } {
  // Reused from call to call (thousands of keys a batch): less for the GC to sweep.
  const keys = reusedKeys;
  const ops = reusedOps;
  keys.length = 0;
  ops.reset();
  keys.push(meta);
  for (const [key, p] of plans) {
    const w = p.first;
    if (w && emitSingleWrite(keys, ops, key, p, w)) continue;
    emitCombinedPlan(keys, ops, key, p);
  }
  return { keys, ops };
}

/**
 * A single write: emitted as is, without building sets. Returns false when it could not be (it is
 * then combined into `p`, for emitCombinedPlan).
 */
function emitSingleWrite(keys: string[], ops: OpsWriter, key: string, p: Plan, w: Write): boolean {
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
      return true;
    }
    ops.rewind(mark);
    if (n === 0) return true;
    combine(p, w);
    return false;
  }
  if (w.op === "unset" && w.fields.length > 0 && w.fields.length <= CHUNK) {
    keys.push(key);
    ops.uint(OP.hdel);
    ops.uint(keys.length);
    ops.uint(w.fields.length);
    for (const f of w.fields) ops.str(f);
    return true;
  }
  if (w.op === "zadd") {
    keys.push(key);
    ops.uint(w.nx ? OP.zaddNx : OP.zadd);
    ops.uint(keys.length);
    ops.uint(1);
    ops.score(w.score === 0 ? 0 : w.score);
    ops.str(w.member);
    return true;
  }
  if (w.op === "zrem") {
    keys.push(key);
    ops.uint(OP.zrem);
    ops.uint(keys.length);
    ops.uint(1);
    ops.str(w.member);
    return true;
  }
  combine(p, w);
  return false;
}

/** A key's combined plan: DEL first, then its removals and additions, in commands of at most CHUNK items. */
function emitCombinedPlan(keys: string[], ops: OpsWriter, key: string, p: Plan): void {
  keys.push(key);
  const k = keys.length;
  if (p.del) {
    ops.uint(OP.del);
    ops.uint(k);
  }
  // Maps are walked by keys() and get(): iterating entries would allocate a pair for each.
  const { zrem, zadd, znx, hdel, hset } = p;
  if (zrem?.size) emitChunked(ops, OP.zrem, k, zrem, (m) => ops.str(m));
  if (zadd?.size) emitChunked(ops, OP.zadd, k, zadd.keys(), (m) => (ops.score(zadd.get(m)!), ops.str(m)));
  if (znx?.size) emitChunked(ops, OP.zaddNx, k, znx.keys(), (m) => (ops.score(znx.get(m)!), ops.str(m)));
  if (hdel?.size) emitChunked(ops, OP.hdel, k, hdel, (f) => ops.str(f));
  if (hset?.size) emitChunked(ops, OP.hset, k, hset.keys(), (f) => (ops.str(f), ops.str(hset.get(f)!)));
}

/** Writes `items` as commands of at most CHUNK items each: the op, the key, the count, then each item. */
function emitChunked<T>(ops: OpsWriter, op: number, k: number, items: Iterable<T>, write: (item: T) => void): void {
  let count = -1;
  let n = 0;
  for (const item of items) {
    if (count < 0 || n === CHUNK) {
      if (count >= 0) ops.setCount(count, n);
      ops.uint(op);
      ops.uint(k);
      count = ops.countSlot();
      n = 0;
    }
    write(item);
    n++;
  }
  ops.setCount(count, n);
}

const reusedKeys: string[] = [];
const reusedOps = new OpsWriter();
