/**
 * The primary's side of the workers' writes: it appends what a worker asks, on the one store that
 * writes the log, and tells every worker after each commit (`committed`), whoever made it.
 */
import { DelegatingEventStore } from "../eventstore/delegating-store.js";
import type { AppendResult, AppendStep, EventStore, ExpectedRevision, NewEvent, SequenceResult } from "../eventstore/port.js";
import { encodeError } from "./error-codec.js";
import type { AppendAnswer, AppendRequest, Channel } from "./messages.js";

/**
 * The log's store in the primary, calling `onCommit` after every append or removal that settled
 * (once per turn however many settled together: one group commit is one signal).
 */
export class CommitSignallingStore extends DelegatingEventStore {
  private signalled = false;

  constructor(
    inner: EventStore,
    private readonly onCommit: () => void,
  ) {
    super(inner);
  }

  override append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return this.signalAfter(super.append(stream, events, expectedRevision));
  }

  override appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    return this.signalAfter(super.appendSequence(steps));
  }

  override get archiving(): EventStore["archiving"] {
    const inner = this.inner.archiving;
    if (!inner) return undefined;
    return {
      removeStreams: (removals, segment) => this.signalAfter(inner.removeStreams(removals, segment)),
      readArchiveSegments: () => inner.readArchiveSegments(),
    };
  }

  private signalAfter<T>(p: Promise<T>): Promise<T> {
    const signal = () => {
      if (this.signalled) return;
      this.signalled = true;
      queueMicrotask(() => {
        this.signalled = false;
        this.onCommit();
      });
    };
    p.then(signal, signal);
    return p;
  }
}

/** Answers one worker's appends on `store` until the channel closes. */
export function serveWrites(store: EventStore, channel: Channel): () => void {
  return channel.onMessage((msg) => {
    if (msg.cyborg === "append") void answer(store, msg).then((a) => channel.send(a));
  });
}

async function answer(store: EventStore, req: AppendRequest): Promise<AppendAnswer> {
  try {
    if (req.single) {
      const step = req.steps[0]!;
      return { cyborg: "appended", id: req.id, appended: [await store.append(step.stream, step.events, step.expectedRevision)] };
    }
    const result = await store.appendSequence(req.steps);
    return { cyborg: "appended", id: req.id, appended: result.appended, ...(result.refusal ? { refusal: encodeError(result.refusal) } : {}) };
  } catch (err) {
    return { cyborg: "appended", id: req.id, appended: [], error: encodeError(err) };
  }
}
