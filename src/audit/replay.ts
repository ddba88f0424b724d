/**
 * `cyborg-es replay --until`: the read models as they were at a point, materialized into another
 * read store (a separate Redis database, or memory), with the projector's one replay
 * (src/projector/rebuild.ts), so every normal query can be asked of the past. The log a past
 * server reads is cut at that point too (pastLog), and takes no commands.
 */
import { name as AUDIT } from "../../projections/audit/projection.js";
import { DomainError } from "../domain/shared/types.js";
import type { ChainCheckpoint, EventStore, ReadAllOptions, ReadStreamOptions, RecordedEvent, SubscribeOptions, Subscription } from "../eventstore/port.js";
import type { Projection } from "../projector/projection.js";
import { replay, type LeftOut, type RebuildProgress } from "../projector/rebuild.js";
import { Slots } from "../projector/slots.js";
import type { ReadStore } from "../readstore/port.js";
import { PastAuditIndex } from "./past-index.js";

export async function replayInto(
  events: EventStore,
  target: ReadStore,
  projections: readonly Projection[],
  upTo: bigint,
  onProgress?: (p: RebuildProgress) => void,
  /** Redis mode: leave the audit index out (and out of the target), see replayedModels. */
  liveIndex = false,
): Promise<LeftOut> {
  const log = { error: (obj: object, msg: string) => console.error(msg, obj) };
  if (liveIndex) await target.drop(AUDIT);
  return replay(events, target, new Slots(replayedModels(projections, liveIndex)).all.slice(), { upTo, batchSize: 2000, log, now: Date.now, onProgress });
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
  const refuse = async (): Promise<never> => {
    throw new DomainError("FORBIDDEN", `this server shows the log as it was at position ${upTo} (cyborg-es replay): it takes no commands`);
  };
  const cut = (events: RecordedEvent[]) => events.filter((e) => e.position <= upTo);
  return {
    kind: inner.kind,
    append: refuse,
    appendSequence: refuse,
    readStream: async (stream: string, options?: ReadStreamOptions) => cut(await inner.readStream(stream, options)),
    readAll: async (options?: ReadAllOptions) => cut(await inner.readAll(options)),
    headPosition: async () => {
      const head = await inner.headPosition();
      return head === undefined || head < upTo ? head : upTo;
    },
    readCheckpoints: async (options) => (await inner.readCheckpoints(options)).filter((c: ChainCheckpoint) => c.position <= upTo),
    positionAt: async (time: Date) => {
      const p = await inner.positionAt(time);
      return p === undefined || p < upTo ? p : upTo;
    },
    // A stream whose last event is after the point may have ended before it or not: left out.
    readStreamEnds: async (options) => (await inner.readStreamEnds(options))?.filter((e) => e.position <= upTo),
    subscribeToAll: (options?: SubscribeOptions) => pastSubscription(inner.subscribeToAll(options), upTo),
    // A view: the store stays its opener's to close.
    close: async () => undefined,
  };
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
