/**
 * The EventStore port, measured: append latency and refusals (each one is a command decided
 * again: the conflict retries of handle.ts and bind.ts) as metrics, and a span per append. With
 * tracing on, each new event's metadata records the `traceparent` of the command that wrote it,
 * so the projector and the notifier continue that trace. Reads and subscriptions pass through.
 */
import { DelegatingEventStore } from "../infra/eventstore/delegating-store.js";
import type { AppendResult, AppendStep, EventStore, ExpectedRevision, NewEvent, SequenceResult } from "../infra/eventstore/port.js";
import { isRefusal } from "../infra/eventstore/port.js";
import type { Metrics } from "./metrics.js";
import { CORRELATION_ATTRIBUTE, inSpan, type Tracing } from "./tracing.js";

export function instrumentEventStore(store: EventStore, metrics: Metrics | undefined, tracing: Tracing | undefined): EventStore {
  if (!metrics && !tracing) return store;
  return new InstrumentedEventStore(store, metrics, tracing);
}

class InstrumentedEventStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly metrics: Metrics | undefined,
    private readonly tracing: Tracing | undefined,
  ) {
    super(inner);
  }

  override append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    const { metrics, inner } = this;
    const traced = this.withTrace(events);
    const correlationId = events[0]?.metadata.correlationId;
    return inSpan(this.tracing, "eventstore.append", () => attributes([stream], events), async () => {
      const t0 = performance.now();
      try {
        const r = await inner.append(stream, traced, expectedRevision);
        metrics?.append("append", "ok", (performance.now() - t0) / 1000, events.length);
        return r;
      } catch (err) {
        metrics?.append("append", isRefusal(err) ? "conflict" : "error", (performance.now() - t0) / 1000, 0);
        throw err;
      }
    }, { correlationId });
  }

  override appendSequence(steps: readonly AppendStep[]): Promise<SequenceResult> {
    const { metrics, inner } = this;
    const traced = this.tracing ? steps.map((s) => ({ ...s, events: this.withTrace(s.events) })) : steps;
    const spanAttributes = () => attributes(steps.map((s) => s.stream), steps.flatMap((s) => s.events));
    const correlationId = steps[0]?.events[0]?.metadata.correlationId;
    return inSpan(this.tracing, "eventstore.appendSequence", spanAttributes, async (span) => {
      const t0 = performance.now();
      try {
        const r = await inner.appendSequence(traced);
        const seconds = (performance.now() - t0) / 1000;
        const written = steps.slice(0, r.appended.length).reduce((n, s) => n + s.events.length, 0);
        metrics?.append("appendSequence", r.refusal ? "conflict" : "ok", seconds, written);
        if (r.refusal) span?.setAttribute("cyborg.refused", r.refusal.message);
        return r;
      } catch (err) {
        metrics?.append("appendSequence", "error", (performance.now() - t0) / 1000, 0);
        throw err;
      }
    }, { correlationId });
  }

  private withTrace(events: readonly NewEvent[]): readonly NewEvent[] {
    // The command's span (the caller's), not the append's: a retried append carries the same one.
    const traceparent = this.tracing?.traceparent(events[0]?.metadata.correlationId);
    return traceparent ? events.map((e) => ({ ...e, metadata: { ...e.metadata, traceparent } })) : events;
  }
}

// Built only for a span that records: with metrics alone an append costs two clock reads and one observation.
const attributes = (streams: string[], events: readonly NewEvent[]) => ({
  "cyborg.streams": streams,
  "cyborg.events": events.length,
  ...(events[0] ? { [CORRELATION_ATTRIBUTE]: events[0].metadata.correlationId } : {}),
});
