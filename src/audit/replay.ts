/**
 * `cyborg-es replay --until`: the read models as they were at a point, materialized into another
 * read store (a separate Redis database, or memory), with the projector's one replay
 * (src/reactors/projector/rebuild.ts), so every normal query can be asked of the past. The log a past
 * server reads is cut at that point too (pastLog), and takes no commands.
 */
import { name as AUDIT } from "../../projections/audit/projection.js";
import { DomainError } from "../domain/shared/types.js";
import { DelegatingEventStore } from "../infra/eventstore/delegating-store.js";
import type { AppendResult, ChainCheckpoint, EventStore, ReadAllOptions, ReadStreamEndsOptions, ReadStreamOptions, RecordedEvent, SequenceResult, StreamEnd, SubscribeOptions, Subscription } from "../infra/eventstore/port.js";
import type { Projection } from "../reactors/projector/projection.js";
import { replay, type LeftOut, type RebuildProgress } from "../reactors/projector/rebuild.js";
import { Slots } from "../reactors/projector/slots.js";
import type { ReadStore } from "../infra/readstore/port.js";
import { PastAuditIndex } from "./past-index.js";

export async function replayInto(
  events: EventStore,
  target: ReadStore,
  projections: readonly Projection[],
  upTo: bigint,
  onProgress?: (p: RebuildProgress) => void,
  /** Redis mode: leave the audit index out (and out of the target), see replayedModels. */
  liveIndex = false,
  /** The log replayed when it is more than `events`: the hosts' archived periods with it (retention/archived-log.ts). */
  source?: Pick<EventStore, "readAll">,
): Promise<LeftOut> {
  const log = { error: (obj: object, msg: string) => console.error(msg, obj) };
  if (liveIndex) await target.drop(AUDIT);
  return replay(events, target, new Slots(replayedModels(projections, liveIndex)).all.slice(), { upTo, source, batchSize: 2000, log, now: Date.now, onProgress });
}

/**
 * What a replay builds: every model, but in Redis mode (`liveIndex`: the live read models are in
 * Redis, where a past server reads them too) the audit index, whose past is the live one cut at
 * the point (past-index.ts).
 */
export function replayedModels(projections: readonly Projection[], liveIndex: boolean): Projection[] {
  return liveIndex ? projections.filter((p) => p.name !== AUDIT) : [...projections];
}

/** The read store of a past server at `upTo`: the replayed models, and in Redis mode the live audit index cut at `upTo`. */
export function pastReadStore(replayed: ReadStore, liveIndex: boolean, upTo: bigint): (live: ReadStore) => ReadStore {
  return (live) => (liveIndex ? new PastAuditIndex(replayed, live, upTo) : replayed);
}

/** The log as it was at `upTo`: nothing after it is read, and nothing is appended. */
export function pastLog(inner: EventStore, upTo: bigint): EventStore {
  return new PastLog(inner, upTo);
}

class PastLog extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly upTo: bigint,
  ) {
    super(inner);
  }

  override append(): Promise<AppendResult> {
    return this.refuse();
  }

  override appendSequence(): Promise<SequenceResult> {
    return this.refuse();
  }

  override async readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.cut(await this.inner.readStream(stream, options));
  }

  override async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.cut(await this.inner.readAll(options));
  }

  override async headPosition(): Promise<bigint | undefined> {
    const head = await this.inner.headPosition();
    return head === undefined || head < this.upTo ? head : this.upTo;
  }

  override async readCheckpoints(options?: { after?: bigint; maxCount?: number }): Promise<ChainCheckpoint[]> {
    return (await this.inner.readCheckpoints(options)).filter((c) => c.position <= this.upTo);
  }

  override async positionAt(time: Date): Promise<bigint | undefined> {
    const p = await this.inner.positionAt(time);
    return p === undefined || p < this.upTo ? p : this.upTo;
  }

  // A stream whose last event is after the point may have ended before it or not: left out.
  override async readStreamEnds(options: ReadStreamEndsOptions): Promise<StreamEnd[] | undefined> {
    return (await this.inner.readStreamEnds(options))?.filter((e) => e.position <= this.upTo);
  }

  override subscribeToAll(options?: SubscribeOptions): Subscription {
    return pastSubscription(this.inner.subscribeToAll(options), this.upTo);
  }

  // A view: the store stays its opener's to close.
  override async close(): Promise<void> {}

  private async refuse(): Promise<never> {
    throw new DomainError("FORBIDDEN", `this server shows the log as it was at position ${this.upTo} (cyborg-es replay): it takes no commands`);
  }

  private cut(events: RecordedEvent[]): RecordedEvent[] {
    return events.filter((e) => e.position <= this.upTo);
  }
}

/** Delivers what the log held up to `upTo`, then waits (nothing more will come) until closed. */
function pastSubscription(inner: Subscription, upTo: bigint): Subscription {
  let wake: (() => void) | undefined;
  let closed = false;
  async function* iterate(): AsyncGenerator<RecordedEvent> {
    for await (const e of inner) {
      if (e.position > upTo) break;
      yield e;
    }
    if (!closed) await new Promise<void>((r) => (wake = r));
  }
  const it = iterate();
  return {
    [Symbol.asyncIterator]: () => it,
    async close() {
      closed = true;
      wake?.();
      await inner.close();
      await it.return(undefined);
    },
  };
}
