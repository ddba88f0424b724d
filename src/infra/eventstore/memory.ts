import { checkExpectedRevision, checkRetry, type StoredIdRef } from "./append-check.js";
import { AppendNotifier, catchUpSubscription } from "./catch-up.js";
import { chainHashes, CHECKPOINT_INTERVAL, contentText, GENESIS, GlobalSegment, versionOf, type ChainCheckpoint } from "./chain.js";
import { isRefusal, matchesFilter } from "./port.js";
import type { AppendResult, AppendStep, SequenceResult, EventStore, ExpectedRevision, NewEvent, ReadAllOptions, ReadStreamEndsOptions, ReadStreamOptions, RecordedEvent, StreamEnd, SubscribeOptions, Subscription } from "./port.js";
import { lastAtOrBefore, sliceStream } from "./read-stream.js";

export interface MemoryEventStoreOptions {
  /** Positions between global-chain checkpoints (default CHECKPOINT_INTERVAL). */
  checkpointInterval?: number;
}

/** In-memory event store for tests. Positions are 1, 2, 3, ... Hash chains as lmdb keeps them (chain.ts). */
export class MemoryEventStore implements EventStore {
  readonly kind = "memory" as const;
  private readonly log: RecordedEvent[] = [];
  private readonly streams = new Map<string, RecordedEvent[]>();
  /** The stream names in order, for readStreamEnds; dropped when a stream is created. */
  private names: string[] | undefined;
  private readonly ids = new Map<string, StoredIdRef>();
  private readonly notifier = new AppendNotifier();
  /** The global chain (version 2): its checkpoints (the start first), and the segment since the last. */
  private readonly checkpoints: ChainCheckpoint[] = [{ position: 0n, hash: GENESIS, version: 2 }];
  private segment = GlobalSegment.from(GENESIS);
  private readonly checkpointInterval: number;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.checkpointInterval = options.checkpointInterval ?? CHECKPOINT_INTERVAL;
  }

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return this.appendNow(stream, events, expectedRevision);
  }

  /** The whole sequence in one turn, as lmdb commits it in one transaction. */
  async appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    const appended: AppendResult[] = [];
    for (const step of steps) {
      try {
        appended.push(this.appendNow(step.stream, step.events, step.expectedRevision));
      } catch (err) {
        if (isRefusal(err)) return { appended, refusal: err };
        throw err;
      }
    }
    return { appended };
  }

  private appendNow(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): AppendResult {
    const existing = this.streams.get(stream);
    const retry = checkRetry(stream, events, (id) => this.ids.get(id));
    if (retry) return retry;
    checkExpectedRevision(stream, expectedRevision, existing ? existing.length - 1 : undefined);
    if (events.length === 0) {
      const last = existing?.at(-1);
      return { revision: last?.revision ?? -1, position: last?.position ?? 0n };
    }
    const list = existing ?? [];
    const recordedAt = new Date();
    // Hashes first: data that is not JSON is refused before anything is written.
    const versions = events.map(versionOf);
    const hashes = chainHashes(list.at(-1)?.hash, list.length, events.map((e) => contentText(stream, e)), versions);
    for (const [i, e] of events.entries()) {
      const recorded: RecordedEvent = {
        id: e.id,
        stream,
        revision: list.length,
        position: BigInt(this.log.length + 1),
        type: e.type,
        data: structuredClone(e.data),
        metadata: structuredClone(e.metadata),
        recordedAt,
        hash: hashes[i]!,
        chainVersion: versions[i] === 1 ? undefined : versions[i],
      };
      list.push(recorded);
      this.log.push(recorded);
      this.ids.set(e.id, { stream, revision: recorded.revision, position: recorded.position });
      this.segment.add(recorded.position, recorded.hash!);
      if (this.log.length % this.checkpointInterval === 0) {
        const hash = this.segment.value();
        this.checkpoints.push({ position: recorded.position, hash, version: 2 });
        this.segment = GlobalSegment.from(hash);
      }
    }
    if (!existing) {
      this.streams.set(stream, list);
      this.names = undefined;
    }
    this.notifier.fire();
    const last = list.at(-1)!;
    return { revision: last.revision, position: last.position };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    return sliceStream(this.streams.get(stream) ?? [], options);
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const start = options.after === undefined ? 0 : Number(options.after);
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    const out: RecordedEvent[] = [];
    for (let i = start; i < this.log.length && out.length < max; i++) {
      const e = this.log[i]!;
      if (matchesFilter(e, options.filter)) out.push(e);
    }
    return out;
  }

  async headPosition(): Promise<bigint | undefined> {
    return this.log.at(-1)?.position;
  }

  async readCheckpoints(options: { after?: bigint; maxCount?: number } = {}): Promise<ChainCheckpoint[]> {
    const head: ChainCheckpoint[] = this.log.length > 0 && this.log.length % this.checkpointInterval !== 0 ? [{ position: BigInt(this.log.length), hash: this.segment.value(), version: 2, head: true }] : [];
    const after = options.after ?? -1n;
    return [...this.checkpoints, ...head].filter((c) => c.position > after).slice(0, options.maxCount);
  }

  async positionAt(time: Date): Promise<bigint | undefined> {
    const i = lastAtOrBefore(this.log.length, (k) => this.log[k]!.recordedAt.getTime(), time.getTime());
    return i < 0 ? undefined : this.log[i]!.position;
  }

  async readStreamEnds({ prefix, after, maxCount }: ReadStreamEndsOptions): Promise<StreamEnd[]> {
    const names = (this.names ??= [...this.streams.keys()].sort());
    const start = after !== undefined && after > prefix ? after : prefix;
    const out: StreamEnd[] = [];
    // The first name at or after `start` (binary search), then on while the prefix holds.
    for (let i = lastAtOrBefore(names.length, (k) => (names[k]! < start ? 0 : 1), 0) + 1; i < names.length && out.length < maxCount; i++) {
      const stream = names[i]!;
      if (!stream.startsWith(prefix)) break;
      if (stream === after) continue;
      const last = this.streams.get(stream)!.at(-1)!;
      out.push({ stream, type: last.type, position: last.position });
    }
    return out;
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    return catchUpSubscription((o) => this.readAll(o), this.notifier, options);
  }

  async close(): Promise<void> {
    this.notifier.fire();
  }
}
