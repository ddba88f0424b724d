/**
 * Event stores for testing decisions that span streams as EventStoreDB runs them: a sequence is
 * appended one step after another (appendStepByStep), and a test can hold a writer between two
 * steps, make an append fail with a transport error, or stop the writer for good (a crash).
 */
import { DelegatingEventStore } from "../../src/infra/eventstore/delegating-store.js";
import { appendStepByStep, type AppendResult, type AppendStep, type EventStore, type ExpectedRevision, type NewEvent, type SequenceResult } from "../../src/infra/eventstore/port.js";

/** What the store does at one append (counted from 1 since `arm`). */
export type Fault =
  /** The append is not written; it fails as a lost connection does; later appends work (the undo runs). */
  | "error-before"
  /** The append is written but its answer is lost: it fails; later appends work. */
  | "error-after"
  /** The append is written, then the process stops: it and every later append fail. */
  | "crash-after";

export class TransportError extends Error {
  readonly code = "UNAVAILABLE";
  constructor(what: string) {
    super(`connection lost (${what})`);
    this.name = "TransportError";
  }
}

export class StepByStepStore extends DelegatingEventStore {
  /** Appends since `arm`. */
  appends = 0;
  /** The fault met, once it was. */
  fired = false;
  private fault: { at: number; kind: Fault } | undefined;
  private crashed = false;
  /** Runs before each append; a test holds a writer here. */
  before?: (stream: string, events: readonly NewEvent[]) => Promise<void>;

  constructor(inner: EventStore) {
    super(inner);
  }

  arm(at: number, kind: Fault): void {
    this.appends = 0;
    this.fired = false;
    this.fault = { at, kind };
  }

  override appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    return appendStepByStep(this, steps);
  }

  override async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    await this.before?.(stream, events);
    if (this.crashed) throw new TransportError("the process stopped");
    const n = ++this.appends;
    const fault = this.fault?.at === n ? this.fault.kind : undefined;
    if (fault) this.fired = true;
    if (fault === "error-before") throw new TransportError(`append ${n} to ${stream}, not written`);
    const r = await this.inner.append(stream, events, expected);
    if (fault === "crash-after") this.crashed = true;
    if (fault) throw new TransportError(`append ${n} to ${stream}, written`);
    return r;
  }
}

/** A gate a writer waits at: `reached` resolves when it arrives, `open()` lets it on. */
export function gate() {
  let arrive!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  const opened = new Promise<void>((r) => (open = r));
  return { reached, open, wait: () => (arrive(), opened) };
}
