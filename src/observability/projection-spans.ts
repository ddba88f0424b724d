/**
 * A projector hook (with tracing on): a span from the moment a batch reaches the projector until
 * every read model committed it, one per trace in the batch, each a child of the command that
 * wrote the events (their metadata's `traceparent`). Events older than a minute (a catch-up after
 * a restart, a rebuild) get none: their traces are long finished.
 */
import type { Span } from "@opentelemetry/api";
import type { RecordedEvent } from "../infra/eventstore/port.js";
import type { ProjectorHooks } from "../reactors/projector/projection.js";
import { CORRELATION_ATTRIBUTE, type Tracing } from "./tracing.js";

const MAX_AGE_MS = 60_000;

export class ProjectionSpans implements ProjectorHooks {
  private open: Array<{ upTo: bigint; span: Span }> = [];

  constructor(private readonly tracing: Tracing) {}

  async beforeApply(batch: readonly RecordedEvent[]): Promise<void> {
    const now = Date.now();
    const byTrace = new Map<string, RecordedEvent[]>();
    for (const e of batch) {
      const tp = e.metadata.traceparent;
      if (typeof tp !== "string" || now - e.recordedAt.getTime() > MAX_AGE_MS) continue;
      const list = byTrace.get(tp);
      if (list) list.push(e);
      else byTrace.set(tp, [e]);
    }
    for (const [tp, events] of byTrace) {
      const span = this.tracing.tracer.startSpan(
        "projector.apply",
        {
          attributes: {
            [CORRELATION_ATTRIBUTE]: events[0]!.metadata.correlationId,
            "cyborg.events": events.length,
            "cyborg.event_types": [...new Set(events.map((e) => e.type))],
            "cyborg.batch_size": batch.length,
            "cyborg.position": events.at(-1)!.position.toString(),
          },
        },
        this.tracing.contextOf(tp),
      );
      this.open.push({ upTo: events.at(-1)!.position, span });
    }
  }

  async afterCommit(position: bigint): Promise<void> {
    if (this.open.length === 0) return;
    this.open = this.open.filter((o) => {
      if (o.upTo > position) return true;
      o.span.end();
      return false;
    });
  }

  replaying(): void {
    for (const o of this.open.splice(0)) o.span.end();
  }
}
