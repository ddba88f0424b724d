/** The embedded store's global hash chain, as the port shows it (chain.ts, lmdb-layout.ts). */
import type { ChainCheckpoint } from "./chain.js";
import { CHAIN_HEAD_KEY, CHAIN_V2_KEY, type LmdbDatabases } from "./lmdb-layout.js";

/** The stored checkpoints after `after` (the chain's start, every interval, where version 2 began), and the chain's head. */
export function readCheckpoints(db: LmdbDatabases, options: { after?: bigint; maxCount?: number }): ChainCheckpoint[] {
  const max = options.maxCount ?? Number.POSITIVE_INFINITY;
  const start = options.after === undefined ? -1 : Number(options.after) + 1;
  const out: ChainCheckpoint[] = [];
  if (max <= 0) return out;
  const v2 = db.chain.get(CHAIN_V2_KEY)?.[0];
  const version = (position: number) => (v2 !== undefined && position >= v2 ? 2 : 1);
  for (const { key, value } of db.checkpoints.getRange({ start, limit: Number.isFinite(max) ? max : undefined })) {
    out.push({ position: BigInt(key), hash: value, version: version(key) });
  }
  const head = db.chain.get(CHAIN_HEAD_KEY);
  if (head && head[0] >= start && out.length < max && (out.length === 0 || BigInt(head[0]) > out.at(-1)!.position)) {
    // The head is also a checkpoint when it falls on an interval; otherwise it is one more.
    out.push({ position: BigInt(head[0]), hash: head[1], version: version(head[0]), head: true });
  }
  return out;
}
