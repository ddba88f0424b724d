/**
 * The event store of an API worker: it reads the embedded LMDB log itself (lmdb-js opens one
 * environment in several processes; each read is an MVCC snapshot) and sends every append to the
 * primary process, the log's only writer, which appends at the expected revisions in its one write
 * transaction at a time and answers with what it recorded or the typed error (error-codec.ts).
 *
 * Reads after an answer see the write: the answer renews the read transaction before the caller
 * goes on. Every commit in the primary (another worker's, the binder's, retention's) is signalled
 * (`committed`), which wakes this worker's subscriptions: no polling.
 */
import { DelegatingEventStore } from "../eventstore/delegating-store.js";
import type { LmdbEventStore } from "../eventstore/lmdb.js";
import type { AppendResult, AppendStep, EventStore, ExpectedRevision, NewEvent, SequenceResult } from "../eventstore/port.js";
import { decodeError } from "./error-codec.js";
import type { AppendAnswer, Channel } from "./messages.js";

export class PrimaryGoneError extends Error {
  readonly code = "UNAVAILABLE";
  constructor() {
    super("the process that writes the event log is gone; the write was not confirmed (try again once the service is back)");
    this.name = "PrimaryGoneError";
  }
}

interface Pending {
  settle(answer: AppendAnswer): void;
  fail(err: Error): void;
}

export class ForwardedWritesStore extends DelegatingEventStore {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private gone = false;
  private readonly stop: () => void;

  constructor(
    private readonly log: LmdbEventStore,
    private readonly channel: Channel,
  ) {
    super(log);
    this.stop = channel.onMessage((msg) => {
      if (msg.cyborg === "committed") log.committedElsewhere();
      else if (msg.cyborg === "appended") this.answered(msg);
    });
    channel.onClose(() => {
      this.gone = true;
      for (const p of this.pending.values()) p.fail(new PrimaryGoneError());
      this.pending.clear();
    });
  }

  override async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    const answer = await this.request([{ stream, events, expectedRevision }], true);
    if (answer.error) throw decodeError(answer.error);
    return answer.appended[0]!;
  }

  override async appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    const answer = await this.request(steps, false);
    if (answer.error) throw decodeError(answer.error);
    return answer.refusal ? { appended: answer.appended, refusal: decodeError(answer.refusal) } : { appended: answer.appended };
  }

  /** Retention runs in the primary only: a worker reads the archive, never writes it. */
  override get archiving(): EventStore["archiving"] {
    const inner = this.log.archiving;
    return {
      removeStreams: () => Promise.reject(new Error("an API worker does not archive: retention runs in the primary process")),
      readArchiveSegments: () => inner.readArchiveSegments(),
    };
  }

  override async close(): Promise<void> {
    this.stop();
    await super.close();
  }

  private request(steps: readonly AppendStep[], single: boolean): Promise<AppendAnswer> {
    if (this.gone) return Promise.reject(new PrimaryGoneError());
    const id = this.nextId++;
    return new Promise<AppendAnswer>((resolve, reject) => {
      this.pending.set(id, { settle: resolve, fail: reject });
      this.channel.send({ cyborg: "append", id, steps, single });
    });
  }

  private answered(answer: AppendAnswer): void {
    const p = this.pending.get(answer.id);
    if (!p) return;
    this.pending.delete(answer.id);
    // Before the caller goes on: its next read must see what it wrote.
    if (answer.appended.length > 0) this.log.committedElsewhere();
    p.settle(answer);
  }
}
