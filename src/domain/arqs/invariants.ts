/**
 * What must hold between an ARQ, the hosts' allocations and its profile, whatever crashed or raced
 * between the streams of one decision (EventStoreDB appends a decision's streams one by one):
 * - every allocated handle belongs to a BIND_STARTED or BOUND ARQ of that handle's target (or to
 *   one that failed after BOUND, which keeps it until unbound or deleted);
 * - every BOUND ARQ's handle is allocated to it;
 * - every live ARQ is recorded by its profile, and a deleted one is not;
 * - a project's quota holds a claim only for an ARQ that exists (a creation that stopped after its
 *   claim, or a deletion before its release, leaves one).
 * Pure: the application loads the streams and repairs what this finds (app/arqs/invariants.ts);
 * the invariant checker (reactors/invariants/) uses it to know which ARQs to look at.
 */
import type { Arq, ArqStreamState } from "./arq.js";

/** A handle a host allocated to the ARQ (what AttachHandleAllocated recorded). */
export interface HeldHandle {
  hostname: string;
  rpUuid: string;
  instanceUuid: string;
  handleUuid: string;
}

/**
 * Does the ARQ hold this allocation: binding (BIND_STARTED) or BOUND to the allocation's host,
 * resource provider and instance, and when BOUND, to that very handle? A BOUND ARQ that failed
 * (its device was lost) keeps its handle until it is unbound or deleted. An allocation the ARQ
 * does not hold may be released; one it holds never is.
 */
export function holdsHandle(arq: Arq | null, a: HeldHandle): boolean {
  if (!arq || arq.hostname !== a.hostname || arq.deviceRpUuid !== a.rpUuid || arq.instanceUuid !== a.instanceUuid) return false;
  if (arq.state === "BIND_STARTED") return true;
  return (arq.state === "BOUND" || arq.state === "BIND_FAILED") && arq.attachment?.handleUuid === a.handleUuid;
}

export type Violation =
  /** A host holds a handle for the ARQ that the ARQ does not hold: release it. */
  | { kind: "orphaned-allocation"; hostname: string }
  /** The ARQ is BOUND but no host holds its handle for it: fail it (its accelerator is not its own). */
  | { kind: "bound-without-handle" }
  /** The ARQ is live but its profile does not record it: a creation that stopped before its profile step. */
  | { kind: "unrecorded"; /** Still INITIAL (never used): the creation is undone; otherwise it is recorded. */ initial: boolean }
  /** The ARQ is deleted but its profile still counts it: a deletion that stopped before its profile step. */
  | { kind: "deleted-still-recorded" }
  /** A project's quota holds a claim for the ARQ, which was never created or is deleted: release it. */
  | { kind: "orphaned-claim"; projectId: string };

export interface ArqFacts {
  arq: ArqStreamState;
  /** Every allocation to this ARQ on the hosts looked at. */
  allocations: readonly HeldHandle[];
  /** Whether the ARQ's profile (the incarnation it was made from) counts it as live; null when the profile is gone or another incarnation. */
  recorded: boolean | null;
  /** The project whose quota holds a claim for this ARQ (null: none does). */
  claimedBy?: string | null;
}

export function arqViolations(f: ArqFacts): Violation[] {
  const arq = f.arq.status === "live" ? f.arq.arq : null;
  const out: Violation[] = [];
  for (const a of f.allocations) if (!holdsHandle(arq, a)) out.push({ kind: "orphaned-allocation", hostname: a.hostname });
  if (arq?.state === "BOUND" && !f.allocations.some((a) => holdsHandle(arq, a))) out.push({ kind: "bound-without-handle" });
  if (arq && f.recorded !== true) out.push({ kind: "unrecorded", initial: arq.state === "INITIAL" });
  if (f.arq.status === "deleted" && f.recorded === true) out.push({ kind: "deleted-still-recorded" });
  if (f.claimedBy && f.arq.status !== "live") out.push({ kind: "orphaned-claim", projectId: f.claimedBy });
  return out;
}
