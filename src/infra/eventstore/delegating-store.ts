/**
 * The one way to wrap the EventStore port: every method forwards to an inner store, so a decorator
 * extends this class and overrides only what it changes. A method added to the port is added here
 * once (the compiler asks for it), and every decorator forwards it.
 */
import type {
  AppendResult,
  AppendStep,
  ChainCheckpoint,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamEndsOptions,
  ReadStreamOptions,
  RecordedEvent,
  SequenceResult,
  StreamEnd,
  SubscribeOptions,
  Subscription,
} from "./port.js";

export class DelegatingEventStore implements EventStore {
  constructor(protected readonly inner: EventStore) {}

  get kind(): EventStore["kind"] {
    return this.inner.kind;
  }

  append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return this.inner.append(stream, events, expectedRevision);
  }

  appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    return this.inner.appendSequence(steps);
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  headPosition(): Promise<bigint | undefined> {
    return this.inner.headPosition();
  }

  subscribeToAll(options?: SubscribeOptions): Subscription {
    return this.inner.subscribeToAll(options);
  }

  readCheckpoints(options?: { after?: bigint; maxCount?: number }): Promise<ChainCheckpoint[]> {
    return this.inner.readCheckpoints(options);
  }

  positionAt(time: Date): Promise<bigint | undefined> {
    return this.inner.positionAt(time);
  }

  readStreamEnds(options: ReadStreamEndsOptions): Promise<StreamEnd[] | undefined> {
    return this.inner.readStreamEnds(options);
  }

  get archiving(): EventStore["archiving"] {
    return this.inner.archiving;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
