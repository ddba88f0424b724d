/** Each projection's place in the log, as far as the projector knows it, and projecting a batch for it. */
import type { RecordedEvent } from "../../infra/eventstore/port.js";
import type { Write } from "../../infra/readstore/port.js";
import type { Projection } from "./projection.js";

export interface Slot {
  readonly projection: Projection;
  readonly types: ReadonlySet<string>;
  /** The model reflects the log up to here (events without writes for it count as applied). */
  processed: bigint | undefined;
  /** The id of the event at `processed` (what a checkpoint saved there names, ReadStore Origin). */
  processedEvent?: string;
  /** The checkpoint the store holds, as far as the projector wrote or read it. */
  stored: bigint | undefined;
  /** The event its origin names, as far as the projector wrote or read it (undefined: none). */
  storedEvent?: string;
  /** Being dropped and replayed. */
  rebuilding: boolean;
  /** The projector marked the model serving in the store (readers may use it). */
  serving: boolean;
  /** Why the projection stopped (its `project` threw). */
  failed?: string;
}

export class Slots {
  readonly all: readonly Slot[];

  constructor(projections: readonly Projection[]) {
    const names = new Set<string>();
    this.all = projections.map((projection) => {
      if (names.has(projection.name)) throw new Error(`two projections named ${projection.name}`);
      names.add(projection.name);
      return { projection, types: new Set(projection.eventTypes), processed: undefined, stored: undefined, rebuilding: false, serving: false };
    });
  }

  get names(): string[] {
    return this.all.map((s) => s.projection.name);
  }

  /** The named slots (all by default); an unknown name throws. */
  pick(names?: readonly string[]): Slot[] {
    if (!names) return [...this.all];
    return names.map((n) => {
      const s = this.all.find((x) => x.projection.name === n);
      if (!s) throw new Error(`no projection named ${n}`);
      return s;
    });
  }

  /** Every running model has applied the log up to `position`. */
  reached(position: bigint): boolean {
    return this.all.every((s) => s.failed || (s.processed !== undefined && s.processed >= position));
  }

  /** The lowest position applied by a running model; undefined while one has applied nothing. */
  lowestProcessed(): bigint | undefined {
    let low: bigint | undefined;
    for (const s of this.all) {
      if (s.failed) continue;
      if (s.processed === undefined) return undefined;
      if (low === undefined || s.processed < low) low = s.processed;
    }
    return low;
  }

  highestProcessed(): bigint | undefined {
    let high: bigint | undefined;
    for (const s of this.all) if (s.processed !== undefined && (high === undefined || s.processed > high)) high = s.processed;
    return high;
  }
}

export interface ProjectLogger {
  error(obj: object, msg: string): void;
}

/**
 * The writes of the batch's events the model has not applied; undefined when `project` threw (the
 * slot is stopped). A replay passes the streams it leaves out (`ended`, see ended-streams.ts).
 */
export function projectBatch(s: Slot, batch: readonly RecordedEvent[], log: ProjectLogger, ended?: ReadonlySet<string>): Write[] | undefined {
  const writes: Write[] = [];
  for (const e of batch) {
    if (s.processed !== undefined && e.position <= s.processed) continue;
    if (!s.types.has(e.type)) continue;
    if (ended?.has(e.stream)) continue;
    try {
      for (const w of s.projection.project(e)) writes.push(w);
    } catch (err) {
      s.failed = `${(err as Error).message} (event ${e.id} at ${e.position}, ${e.type})`;
      log.error({ err, projection: s.projection.name, event: e.id, position: e.position.toString() }, "projection failed; stopped");
      return undefined;
    }
  }
  return writes;
}
