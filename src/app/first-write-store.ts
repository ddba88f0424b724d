/**
 * A store whose first write carries `first()`'s step ahead of its own, in the same sequence (one
 * commit on lmdb): the claim of an idempotency key goes ahead of what the command writes under it
 * (Streams.beforeFirstWrite). A refused `first` step rejects the write with `refused()`.
 */
import { DelegatingEventStore } from "../infra/eventstore/delegating-store.js";
import { SequenceInterruptedError, type AppendResult, type AppendStep, type EventStore, type ExpectedRevision, type NewEvent, type SequenceResult } from "../infra/eventstore/port.js";

export class FirstWriteStore extends DelegatingEventStore {
  private firstWrite: Promise<SequenceResult> | undefined;

  constructor(
    inner: EventStore,
    private readonly first: () => Promise<AppendStep>,
    private readonly refused: () => Error,
  ) {
    super(inner);
  }

  override async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    if (this.firstWrite) return (await this.firstWrite, this.inner.append(stream, events, expectedRevision));
    const { appended, refusal } = await this.sequence([{ stream, events, expectedRevision }]);
    if (refusal) throw refusal;
    return appended[0]!;
  }

  override appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    return this.sequence(steps);
  }

  private async sequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    // Later writes wait for the first (and fail as it did when its claim was refused).
    if (this.firstWrite) return (await this.firstWrite, this.inner.appendSequence(steps));
    this.firstWrite = this.withFirst(steps);
    return this.firstWrite;
  }

  private async withFirst(steps: readonly AppendStep[]): Promise<SequenceResult> {
    const result = await this.inner.appendSequence([await this.first(), ...steps]).catch((err: unknown) => {
      // Interrupted after the claim: the committed prefix of the caller's own steps.
      throw err instanceof SequenceInterruptedError ? new SequenceInterruptedError(err.appended.slice(1), err.cause) : err;
    });
    if (result.appended.length === 0) throw this.refused();
    return { appended: result.appended.slice(1), refusal: result.refusal };
  }
}
