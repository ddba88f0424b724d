/**
 * Writes of one batch combined per key: blind writes on different keys commute, so every field set
 * on a hash goes into one HSET, every member added to a sorted set into one ZADD, and so on (the
 * last write of a field or member wins, as it would one by one).
 */
import type { Write } from "./port.js";

/**
 * What the batch does to one key. Most keys (a doc) get one write: it is kept as is (`first`) and
 * encoded when emitted; a second write turns the plan into sets of fields and members (the last
 * write of a field or member wins, as it would one by one).
 */
export interface Plan {
  del: boolean;
  first?: Write;
  hset?: Map<string, string>;
  hdel?: Set<string>;
  zadd?: Map<string, number>;
  znx?: Map<string, number>;
  zrem?: Set<string>;
}

export function setField(p: Plan, f: string, json: string): void {
  (p.hset ??= new Map()).set(f, json);
  p.hdel?.delete(f);
}

export function delField(p: Plan, f: string): void {
  p.hset?.delete(f);
  if (!p.del) (p.hdel ??= new Set()).add(f);
}

export function addMember(p: Plan, m: string, s: number, nx: boolean): void {
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

export function removeMember(p: Plan, m: string): void {
  p.zadd?.delete(m);
  p.znx?.delete(m);
  if (!p.del) (p.zrem ??= new Set()).add(m);
}

export function combine(p: Plan, w: Write): void {
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

export function json(key: string, f: string, v: unknown): string {
  if (v === null) return "null";
  const out = JSON.stringify(v);
  if (out === undefined) throw new TypeError(`field ${f} of ${key} is not JSON`);
  return out;
}
