/**
 * The audit index as it was at a position, read from the live one, for a past server in Redis
 * mode (`cyborg-es replay --until P`, REDIS_URL set). The index (projections/audit) only grows,
 * and each entry is scored by the position of the event that added it: a parts entry keeps the
 * position that first added it (NX), and nothing is ever removed. So its entries scored at most
 * P are exactly what a replay up to P would build, and the replay need not build it.
 *
 * Reads of `{audit}` keys go to the live store cut at P (`range` with `until`); every other key
 * to the replayed store. Fails closed: while the live index has not reached P (a projector
 * behind, or rebuilding it), audit reads answer ReadStoreUnavailableError, as a model not
 * serving does.
 */
import { name as AUDIT } from "../../projections/audit/projection.js";
import { ReadStoreUnavailableError } from "../infra/readstore/port.js";
import { projectionOfKey } from "../infra/readstore/keys-and-cursors.js";
import type { Doc, Origin, RangeOptions, RangePage, ReadStore, Stamp, StoreDump, Write } from "../infra/readstore/port.js";

const isAudit = (key: string) => projectionOfKey(key) === AUDIT;

export class PastAuditIndex implements ReadStore {
  readonly kind: ReadStore["kind"];
  private readonly until: number;

  /** `past`: the replayed models (without audit); `live`: the live read store (guarded, for the API). */
  constructor(
    private readonly past: ReadStore,
    private readonly live: ReadStore,
    private readonly upTo: bigint,
  ) {
    this.kind = past.kind;
    this.until = Number(upTo);
  }

  async applyBatch(projection: string, writes: readonly Write[], checkpoint: bigint, expected?: bigint | null, origin?: Origin): Promise<void> {
    this.notAudit(projection);
    return this.past.applyBatch(projection, writes, checkpoint, expected, origin);
  }

  async getCheckpoint(projection: string): Promise<bigint | undefined> {
    if (projection !== AUDIT) return this.past.getCheckpoint(projection);
    return (await this.reached()) ? this.upTo : undefined;
  }

  async getCheckpoints(projections: readonly string[]): Promise<Array<bigint | undefined>> {
    return Promise.all(projections.map((p) => this.getCheckpoint(p)));
  }

  /** The audit index's stamp is the live one's: a checkpoint at P once it reached P, without an origin. */
  async getStamps(projections: readonly string[]): Promise<Array<Stamp | undefined>> {
    const others = await this.past.getStamps(projections.filter((p) => p !== AUDIT));
    const audit = projections.includes(AUDIT) ? await this.getCheckpoint(AUDIT) : undefined;
    return projections.map((p) => (p === AUDIT ? (audit === undefined ? undefined : { checkpoint: audit }) : others.shift()));
  }

  watchReconnects(listener: () => void): () => void {
    return this.past.watchReconnects(listener);
  }

  async drop(projection: string): Promise<void> {
    this.notAudit(projection);
    return this.past.drop(projection);
  }

  async markServing(projection: string, checkpoint: bigint | null): Promise<boolean> {
    this.notAudit(projection);
    return this.past.markServing(projection, checkpoint);
  }

  async unmarkServing(projection: string): Promise<void> {
    this.notAudit(projection);
    return this.past.unmarkServing(projection);
  }

  async serving(projections: readonly string[]): Promise<boolean[]> {
    const others = projections.filter((p) => p !== AUDIT);
    const [serving, audit] = await Promise.all([this.past.serving(others), projections.includes(AUDIT) ? this.auditServing() : false]);
    return projections.map((p) => (p === AUDIT ? audit : serving.shift()!));
  }

  guarded(): ReadStore {
    return new PastAuditIndex(this.past.guarded(), this.live, this.upTo);
  }

  /** The audit model holds no docs. */
  getDocs(keys: readonly string[]): Promise<Array<Doc | null>> {
    return this.split(keys, (k) => this.past.getDocs(k), async (k) => k.map(() => null));
  }

  getMembers(keys: readonly string[]): Promise<string[][]> {
    return this.split(
      keys,
      (k) => this.past.getMembers(k),
      (k) => Promise.all(k.map(async (key) => (await this.cut([key], { limit: Number.MAX_SAFE_INTEGER })).items.map((i) => i.member))),
    );
  }

  count(keys: readonly string[]): Promise<number[]> {
    return this.split(
      keys,
      (k) => this.past.count(k),
      (k) => Promise.all(k.map(async (key) => (await this.cut([key], { limit: 0 })).total)),
    );
  }

  range(keys: readonly string[], options: RangeOptions): Promise<RangePage> {
    const audit = keys.filter(isAudit).length;
    if (audit === 0) return this.past.range(keys, options);
    if (audit < keys.length) throw new RangeError("range: the audit index intersected with another model");
    return this.cut(keys, options);
  }

  async dump(projection: string): Promise<StoreDump> {
    this.notAudit(projection);
    return this.past.dump(projection);
  }

  close(): Promise<void> {
    return this.past.close();
  }

  private async cut(keys: readonly string[], options: RangeOptions): Promise<RangePage> {
    if (!(await this.reached())) throw this.behind();
    return this.live.range(keys, { ...options, until: Math.min(options.until ?? Infinity, this.until) });
  }

  private async reached(): Promise<boolean> {
    const at = await this.live.getCheckpoint(AUDIT);
    return at !== undefined && at >= this.upTo;
  }

  private async auditServing(): Promise<boolean> {
    const [at, [serving]] = await Promise.all([this.live.getCheckpoint(AUDIT), this.live.serving([AUDIT])]);
    return serving === true && at !== undefined && at >= this.upTo;
  }

  private behind(): ReadStoreUnavailableError {
    return new ReadStoreUnavailableError([AUDIT], `the live audit index has not reached position ${this.upTo} yet`);
  }

  private notAudit(projection: string): void {
    if (projection === AUDIT) throw new RangeError(`the past audit index is the live one's, cut at ${this.upTo}: it is not written here`);
  }

  /** Reads the audit keys with `audit`, the others with `other`, and puts the answers back in order. */
  private async split<T>(keys: readonly string[], other: (k: string[]) => Promise<T[]>, audit: (k: string[]) => Promise<T[]>): Promise<T[]> {
    const mine = keys.map(isAudit);
    if (!mine.includes(true)) return other([...keys]);
    const [a, o] = await Promise.all([audit(keys.filter((_, i) => mine[i])), other(keys.filter((_, i) => !mine[i]))]);
    return mine.map((m) => (m ? a.shift()! : o.shift()!));
  }
}
