/**
 * The notification of a resolved bind, in one shape: what acceleratorRequestBound sends, what the
 * projector publishes to every API process, and what Nova gets as its external event
 * (cyborg-reference 2.3), each from the same fields.
 */
import type { BindResolution } from "./bind-resolutions.js";

/** Nova's name for the event, and the pub/sub topic it travels on. */
export const ARQ_BOUND_EVENT = "accelerator-request-bound";

export interface BoundNotification {
  name: typeof ARQ_BOUND_EVENT;
  /** The instance. */
  serverUuid: string;
  /** The ARQ uuid, as Nova expects the tag. */
  tag: string;
  status: "COMPLETED" | "FAILED";
  reason: string | null;
  /** Log position of the event that resolved the bind (decimal string). */
  position: string;
}

/** The notification of a bind resolution found at `position` in the log. */
export const boundNotification = (r: Pick<BindResolution, "arqUuid" | "status" | "reason">, instanceUuid: string, position: bigint | string): BoundNotification => ({
  name: ARQ_BOUND_EVENT,
  serverUuid: instanceUuid,
  tag: r.arqUuid,
  status: r.status,
  reason: r.reason,
  position: position.toString(),
});

/** Nova's os-server-external-events entry for a resolved bind. */
export interface NovaBoundEvent {
  name: typeof ARQ_BOUND_EVENT;
  server_uuid: string;
  /** The ARQ uuid. */
  tag: string;
  status: "completed" | "failed";
}

export const novaBoundEvent = (r: Pick<BindResolution, "arqUuid" | "status">, instanceUuid: string): NovaBoundEvent => ({
  name: ARQ_BOUND_EVENT,
  server_uuid: instanceUuid,
  tag: r.arqUuid,
  status: r.status === "COMPLETED" ? "completed" : "failed",
});
