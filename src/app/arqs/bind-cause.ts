/**
 * What a bind's later steps answer: the bind's request (its correlation id, so that a trace of the
 * request shows the bind completing) and the event that started it. The binder's steps carry it,
 * and so do the steps that complete a bind on an agent's answer.
 */
import type { RecordedEvent } from "../../infra/eventstore/port.js";

export const BINDER_PRINCIPAL = "system:binder";

export interface Cause {
  correlationId: string;
  causationId: string;
  /** The project of the request (recorded with the step's events, so its trace stays that project's). */
  requestProject: string | null;
}

export const causeOf = (e: RecordedEvent): Cause => ({
  correlationId: e.metadata.correlationId,
  causationId: e.id,
  requestProject: typeof e.metadata.project === "string" ? e.metadata.project : null,
});

/** The context of a step that finishes the bind `started` began, as the binder records it. */
export const bindStepContext = (started: RecordedEvent) => ({ principal: BINDER_PRINCIPAL, ...causeOf(started) });
