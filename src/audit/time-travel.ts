/**
 * Time travel: an aggregate as it was at a log position, folded from its stream with the domain's
 * own evolve (the deciders' `evolve`, as the command handlers fold it: no second implementation).
 *
 * Cost is bounded by state snapshots kept in memory: while folding a stream, every `every`-th
 * revision's state is kept (states are immutable, so a snapshot is a reference). A later fold
 * starts from the last snapshot at or before the position it wants, so it reads and folds at most
 * `every` events (256 by default) once the stream was folded once. The first fold of a long
 * stream in a process reads it whole (bench:audit's asof_cold_ms). Snapshots of least recently
 * used streams are dropped beyond `maxSnapshots` in all (4096: a 64-device host's state is about
 * 15 KB beyond what neighbouring snapshots share, so some 60 MB at most).
 */
import type { DomainEventShape, Loaded } from "../app/handle.js";
import type { AggregateKind } from "../app/streams.js";
import type { EventStore } from "../infra/eventstore/port.js";
import { firstAfter } from "../infra/eventstore/positions.js";
import { resolvePoint } from "./points.js";

/** The point an answer reflects: every event up to `position`, and nothing after. */
export interface PointInTime {
  /** A log position; 0 is before the first event. */
  position: bigint;
  /** What the caller asked for: a position or an ISO-8601 time. */
  requested: string;
}

export interface TimeTravelOptions {
  /** Revisions between snapshots (default 256). */
  every?: number;
  /** Snapshots kept in all (default 4096). */
  maxSnapshots?: number;
}

interface Snapshot {
  revision: number;
  position: bigint;
  state: unknown;
}

export class TimeTravel {
  private readonly every: number;
  private readonly maxSnapshots: number;
  /** Per stream, in revision order; the Map's order is least recently used first. */
  private readonly snapshots = new Map<string, Snapshot[]>();
  private kept = 0;

  constructor(
    private readonly store: EventStore,
    options: TimeTravelOptions = {},
  ) {
    this.every = options.every ?? 256;
    this.maxSnapshots = options.maxSnapshots ?? 4096;
  }

  /**
   * The point `asOf` names: a log position (a decimal string) or an ISO-8601 time (the last event
   * the store recorded at or before it). A point past the head is the head: the future is not known.
   */
  async at(asOf: string): Promise<PointInTime> {
    const [head, p] = await Promise.all([this.store.headPosition(), resolvePoint(this.store, asOf, "asOf")]);
    return { position: p < (head ?? 0n) ? p : (head ?? 0n), requested: asOf };
  }

  /** The aggregate after every event of its stream up to `upTo` (position; inclusive). */
  async fold<S, E extends DomainEventShape>(kind: AggregateKind<unknown, S, E>, id: string, upTo: bigint): Promise<Loaded<S>> {
    const stream = kind.streamName(id);
    const base = this.before(stream, upTo);
    let state = base ? (base.state as S) : kind.decider.initialState();
    let revision = base?.revision ?? -1;
    let position = base?.position ?? null;
    for (;;) {
      const page = await this.store.readStream(stream, { fromRevision: revision + 1, maxCount: this.every });
      for (const e of page) {
        if (e.position > upTo) return { state, revision, position };
        state = kind.decider.evolve(state, e as unknown as E);
        revision = e.revision;
        position = e.position;
        if ((revision + 1) % this.every === 0) this.keep(stream, { revision, position, state });
      }
      if (page.length < this.every) return { state, revision, position };
    }
  }

  /** Snapshots held now (tests, the benchmark). */
  get snapshotCount(): number {
    return this.kept;
  }

  private before(stream: string, upTo: bigint): Snapshot | undefined {
    const list = this.snapshots.get(stream);
    if (!list) return undefined;
    this.snapshots.delete(stream);
    this.snapshots.set(stream, list);
    const after = firstAfter(list, upTo);
    return after > 0 ? list[after - 1] : undefined;
  }

  private keep(stream: string, snap: Snapshot): void {
    let list = this.snapshots.get(stream);
    if (!list) this.snapshots.set(stream, (list = []));
    let i = list.length;
    while (i > 0 && list[i - 1]!.revision > snap.revision) i--;
    if (i > 0 && list[i - 1]!.revision === snap.revision) return;
    list.splice(i, 0, snap);
    this.kept++;
    while (this.kept > this.maxSnapshots) {
      const [oldest, dropped] = this.snapshots.entries().next().value as [string, Snapshot[]];
      this.snapshots.delete(oldest);
      this.kept -= dropped.length;
    }
  }
}

const shared = new WeakMap<EventStore, TimeTravel>();

/** The process's time travel over a store (one snapshot cache per store). */
export function timeTravelFor(store: EventStore): TimeTravel {
  let tt = shared.get(store);
  if (!tt) shared.set(store, (tt = new TimeTravel(store)));
  return tt;
}
