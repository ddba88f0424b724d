/**
 * The global hash chain on EventStoreDB (chain.ts, version 2), kept in a stream of the namespace.
 *
 * EventStoreDB has no transaction across streams, so the chain cannot be advanced in the commit of
 * each event as lmdb does. Instead its checkpoints are recorded after the fact: once the log holds
 * `interval` events past the last checkpoint, one is appended to CHECKPOINT_STREAM with the chain's
 * value after the last of them (the segment folded from the previous checkpoint's value, every
 * event of the namespace's $all in position order, checkpoint events included). Any process may
 * record one: it appends at the stream's revision under an id made from the position, so two
 * processes recording the same checkpoint write it once. The chain starts at position 0 with
 * GENESIS. `audit verify` compares its own walk with each checkpoint, so an event removed or
 * changed before the newest checkpoint (a stream's last events included) is found; the events
 * after it are covered by their stream chains only until the next checkpoint is recorded.
 */
import { CHECKPOINT_INTERVAL, contentDigest, GENESIS, GlobalSegment, type ChainCheckpoint } from "./chain.js";
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from "./port.js";

export const CHECKPOINT_STREAM = "chain-checkpoints";
export const CHECKPOINT_TYPE = "GlobalChainCheckpointed";
const START: ChainCheckpoint = { position: 0n, hash: GENESIS, version: 2 };

interface CheckpointData {
  position: string;
  hash: string;
}

type ChainStore = Pick<EventStore, "readAll" | "readStream" | "append">;

const toCheckpoint = (e: RecordedEvent): ChainCheckpoint => {
  const d = e.data as CheckpointData;
  return { position: BigInt(d.position), hash: d.hash, version: 2 };
};

/** The chain's start, then every recorded checkpoint, after `after`. */
export async function readChainCheckpoints(store: ChainStore, options: { after?: bigint; maxCount?: number } = {}): Promise<ChainCheckpoint[]> {
  const recorded = (await store.readStream(CHECKPOINT_STREAM)).filter((e) => e.type === CHECKPOINT_TYPE).map(toCheckpoint);
  const after = options.after ?? -1n;
  return [START, ...recorded].filter((c) => c.position > after).slice(0, options.maxCount);
}

/** What an event adds to the chain: its hash, or (written before hashes) the digest verify uses too. */
function linkOf(e: RecordedEvent): string {
  if (e.hash !== undefined) return e.hash;
  try {
    return contentDigest(e.stream, e);
  } catch {
    return GENESIS;
  }
}

export class ChainKeeper {
  private running: Promise<void> | undefined;
  private sinceLast = 0;

  constructor(
    private readonly store: ChainStore,
    private readonly interval: number = CHECKPOINT_INTERVAL,
  ) {}

  /** After this process appended `events`: records the checkpoints due once it appended an interval's worth. */
  appended(events: number): void {
    this.sinceLast += events;
    if (this.sinceLast < this.interval || this.running) return;
    this.sinceLast = 0;
    // A failure (a lost connection) is tried again after the next interval's appends.
    this.running = this.record()
      .catch(() => undefined)
      .finally(() => (this.running = undefined));
  }

  /** Waits for a recording under way. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** Records every checkpoint that is due: one for each full `interval` of events after the last. */
  async record(): Promise<void> {
    for (;;) {
      const [last] = await this.store.readStream(CHECKPOINT_STREAM, { direction: "backwards", maxCount: 1 });
      const from = last ? toCheckpoint(last) : START;
      const page = await this.store.readAll({ after: from.position, maxCount: this.interval });
      if (page.length < this.interval) return;
      const segment = GlobalSegment.from(from.hash);
      for (const e of page) segment.add(e.position, linkOf(e));
      const data: CheckpointData = { position: page.at(-1)!.position.toString(), hash: segment.value() };
      const metadata = { principal: "system:chain-keeper", correlationId: `chain-${data.position}`, causationId: `chain-${data.position}`, at: page.at(-1)!.recordedAt.toISOString() };
      try {
        await this.store.append(CHECKPOINT_STREAM, [{ id: `chain-checkpoint-${data.position}`, type: CHECKPOINT_TYPE, data, metadata }], last ? last.revision : "no_stream");
      } catch (err) {
        // Another process recorded a checkpoint first: read it and go on from there.
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
      }
    }
  }
}
