/**
 * The ARQ state machine of cyborg-reference 2.2 (ARQ_STATES_TRANSFORM_MATRIX): target state to the
 * states it may be entered from. DELETING is the target of a delete (ArqDeleted ends the stream).
 * Unbind bypasses the matrix in Cyborg (a plain save); UnbindArq keeps that, see decider.ts.
 */
import type { ArqState } from "../shared/types.js";

export type ArqTarget = Exclude<ArqState, "INITIAL">;

export const ARQ_TRANSITIONS: Readonly<Record<ArqTarget, readonly ArqState[]>> = {
  BIND_STARTED: ["INITIAL", "UNBOUND"],
  BOUND: ["BIND_STARTED"],
  UNBOUND: ["INITIAL", "BIND_STARTED", "BOUND", "BIND_FAILED"],
  BIND_FAILED: ["BIND_STARTED", "BOUND"],
  DELETING: ["INITIAL", "BIND_STARTED", "BOUND", "UNBOUND", "BIND_FAILED"],
};

export function canTransition(from: ArqState, to: ArqTarget): boolean {
  return ARQ_TRANSITIONS[to].includes(from);
}
