/** The store and the aggregate cache, with the deciders bound to their streams. */
import { arqDecider } from "../domain/arqs/decider.js";
import { catalogueDecider } from "../domain/bitstreams/decider.js";
import { idempotencyDecider } from "../domain/idempotency/decider.js";
import { deviceProfileDecider } from "../domain/device-profiles/decider.js";
import { uuidClaimDecider } from "../domain/device-profiles/uuid-claim.js";
import { instanceDecider } from "../domain/instances/decider.js";
import { booksDue, closeBooks, type BooksPolicy } from "../domain/inventory/books.js";
import { hostDecider, type HostState } from "../domain/inventory/decider.js";
import { quotaDecider } from "../domain/quotas/decider.js";
import { fold, type Decider } from "../domain/shared/decider.js";
import { stream, type CommandContext } from "../domain/shared/types.js";
import { SequenceInterruptedError, type AppendResult, type AppendStep, type EventStore, type SequenceResult } from "../infra/eventstore/port.js";
import { AggregateCache } from "./aggregate-cache.js";
import { FirstWriteStore } from "./first-write-store.js";
import { handleCommand, loadAggregate, toNewEvent, type CommandSource, type DomainEventShape, type Loaded } from "./handle.js";
import { StreamLocks } from "./stream-locks.js";

/** One aggregate type: how its stream is named, and its decider. */
export interface AggregateKind<C, S, E extends DomainEventShape> {
  streamName(id: string): string;
  decider: Decider<C, S, E>;
  /** The summary event its stream's periods start with, from which a fold may start (closing the books). */
  periodStart?: string;
}

const kind = <C, S, E extends DomainEventShape>(streamName: (id: string) => string, decider: Decider<C, S, E>, periodStart?: string): AggregateKind<C, S, E> => ({
  streamName,
  decider,
  periodStart,
});

export const aggregates = {
  profile: kind(stream.deviceProfile, deviceProfileDecider),
  profileUuid: kind(stream.deviceProfileUuid, uuidClaimDecider),
  host: kind(stream.host, hostDecider, "HostBooksClosed"),
  arq: kind(stream.arq, arqDecider),
  instance: kind(stream.instance, instanceDecider),
  catalogue: kind(() => stream.bitstreams(), catalogueDecider),
  idempotency: kind(stream.idempotency, idempotencyDecider),
  quota: kind(stream.quota, quotaDecider),
};

/** A decision ready to append: the events `kind`'s decider gave for the state it loaded. */
export class Decided<S, E extends DomainEventShape> {
  /** The stream after this step, once Streams.appendSequence appended it. */
  result?: Loaded<S>;

  constructor(
    readonly kind: AggregateKind<unknown, S, E>,
    readonly id: string,
    readonly loaded: Loaded<S>,
    readonly events: readonly E[],
    readonly options: {
      /** The state after `events`, when the decider already folded them. */
      after?: S;
      /**
       * "stream_exists" for a decision that commutes with others on its stream: it is appended
       * wherever the stream is, and its state afterwards is read back. Default: exactly at
       * `loaded.revision`.
       */
      expected?: "stream_exists";
      /** Who and what this step's events answer, where it is not the sequence's request (a bind completed on an agent's answer). */
      ctx?: Pick<CommandContext, "principal" | "correlationId" | "causationId" | "requestProject">;
    } = {},
  ) {}
}

/** Settings the use cases decide with, beside the streams. */
export interface StreamPolicies {
  /** PARTITION_KEEP_IDLE: a released partition stays made, free for its profile's next ARQ, instead of being destroyed. */
  keepIdlePartitions: boolean;
  /** HOST_PERIOD_EVENTS, HOST_PERIOD_DAYS: when a host stream's period closes (absent: never). */
  hostBooks?: BooksPolicy;
}

export class Streams {
  constructor(
    readonly store: EventStore,
    readonly cache = new AggregateCache(),
    readonly locks = new StreamLocks(),
    readonly policies: StreamPolicies = { keepIdlePartitions: false },
  ) {}

  /**
   * The same streams (store, cache, locks), whose first write carries `first()`'s step ahead of its
   * own, in the same sequence (one commit on lmdb): what a command writes under an idempotency key
   * is preceded by the key's claim at no extra commit, and a command refused before it writes
   * anything writes nothing at all. A refused `first` step rejects the write with `refused()`.
   */
  beforeFirstWrite(first: () => Promise<AppendStep>, refused: () => Error): Streams {
    return new Streams(new FirstWriteStore(this.store, first, refused), this.cache, this.locks, this.policies);
  }

  load<C, S, E extends DomainEventShape>(kind: AggregateKind<C, S, E>, id: string): Promise<Loaded<S>> {
    return loadAggregate(this.store, kind.streamName(id), kind.decider, this.cache, kind.periodStart);
  }

  handle<C, S, E extends DomainEventShape>(kind: AggregateKind<C, S, E>, id: string, command: CommandSource<C, S>, ctx: CommandContext) {
    const name = kind.streamName(id);
    const run = () => handleCommand(this.store, name, kind.decider, command, ctx, { cache: this.cache, periodStart: kind.periodStart });
    if (!this.closesBooks(kind)) return this.locks.run([name], run);
    // The summary goes in while the process's other writers of the stream still wait.
    return this.locks.run([name], async () => {
      const result = await run();
      if (result.events.length > 0) await this.closeBooksIfDue(id, result as unknown as Loaded<HostState>, ctx);
      return result;
    });
  }

  /**
   * Appends decisions that depend on each other as one sequence (EventStore.appendSequence: one
   * commit on lmdb, step by step on EventStoreDB), each step checked against the revision it was
   * decided on; stops at the first refused step. Each appended step gets its `result`, and the
   * cache learns it. Returns why the next step was refused, if one was. A sequence interrupted
   * after some steps were committed (SequenceInterruptedError) gives those steps their `result`,
   * then rejects with the error the next step met, so that the caller can undo what was committed.
   */
  async appendSequence(steps: ReadonlyArray<Decided<unknown, DomainEventShape>>, ctx: CommandContext): Promise<{ refusal?: Error }> {
    if (steps.length === 0) return {};
    let result: SequenceResult;
    try {
      result = await this.store.appendSequence(
        steps.map((st) => ({
          stream: st.kind.streamName(st.id),
          events: st.events.map((e) => toNewEvent(e, st.options.ctx ? { ...ctx, ...st.options.ctx } : ctx)),
          expectedRevision: st.options.expected ?? (st.loaded.revision < 0 ? ("no_stream" as const) : st.loaded.revision),
        })),
      );
    } catch (err) {
      if (!(err instanceof SequenceInterruptedError)) throw err;
      await this.learn(steps, err.appended);
      throw err.cause;
    }
    await this.learn(steps, result.appended);
    for (const st of steps) if (st.result && this.closesBooks(st.kind)) await this.closeBooksIfDue(st.id, st.result as Loaded<HostState>, ctx);
    return { refusal: result.refusal };
  }

  private closesBooks(kind: AggregateKind<unknown, unknown, DomainEventShape>): boolean {
    return kind === (aggregates.host as AggregateKind<unknown, unknown, DomainEventShape>) && (this.policies.hostBooks?.maxEvents ?? 0) > 0;
  }

  /**
   * After a write to a host stream: appends HostBooksClosed, at the exact revision written, when
   * the stream's period is due to close (docs/operations.md, "Retention"). A writer that came in
   * between wins; the next write tries again. A summary that fails changes nothing: the period
   * goes on.
   */
  private async closeBooksIfDue(hostname: string, written: Loaded<HostState>, ctx: CommandContext): Promise<void> {
    if (!booksDue(written.state, written.revision, ctx.at, this.policies.hostBooks!)) return;
    const summary = new Decided(aggregates.host, hostname, written, [closeBooks(written.state, written.revision, ctx.at)]);
    const books: CommandContext = { principal: "system:host-books", correlationId: ctx.correlationId, causationId: ctx.causationId, at: ctx.at };
    try {
      await this.store.appendSequence([{ stream: stream.host(hostname), events: summary.events.map((e) => toNewEvent(e, books)), expectedRevision: written.revision }]).then((r) => this.learn([summary as Decided<unknown, DomainEventShape>], r.appended));
    } catch {
      // The period goes on; the next write to the host closes it.
    }
  }

  /** Gives each appended step its `result` (read back where other writers' events may sit in between). */
  private async learn(steps: ReadonlyArray<Decided<unknown, DomainEventShape>>, appended: readonly AppendResult[]): Promise<void> {
    for (const [i, r] of appended.entries()) {
      const st = steps[i]!;
      // Other writers' events may sit between what was loaded and what was appended: read back,
      // unless the revisions show that nothing did.
      if (st.options.expected && r.revision !== st.loaded.revision + st.events.length) {
        // After an interruption the store may not answer: the step's own events, uncached, say what it did.
        st.result = await this.load(st.kind, st.id).catch(() => ({ state: fold(st.kind.decider, st.loaded.state, st.events), revision: r.revision, position: r.position }));
        continue;
      }
      st.result = { state: st.options.after ?? fold(st.kind.decider, st.loaded.state, st.events), revision: r.revision, position: r.position };
      this.cache.set(st.kind.streamName(st.id), st.result);
    }
  }
}
