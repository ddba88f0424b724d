/**
 * Which ARQ events resolve a bind: the one rule behind GraphQL's acceleratorRequestBound and Nova's
 * accelerator-request-bound (cyborg-reference 2.3). An ARQ in BIND_STARTED that becomes BOUND
 * completes its bind; one that becomes BIND_FAILED fails it. BOUND -> BIND_FAILED (its device was
 * lost) resolves nothing: that bind was resolved when it completed.
 *
 * A follower feeds the tracker its ARQ events in log order; the tracker remembers which ARQs are in
 * BIND_STARTED. ArqBound can only follow BIND_STARTED, but ArqBindFailed can follow BOUND too, so a
 * follower that starts in the middle of the log must learn the state of an ARQ whose failure it
 * sees before its start: `mustLearn` names those events, the follower looks the ARQs up as it can
 * (the read model, or the ARQ's stream folded up to the event) and tells `learnBinding`.
 */
import type { ArqEvent } from "./events.js";

export interface BindResolution {
  arqUuid: string;
  /** The instance the bind was for; null for a failure of an ARQ whose instance was never known. */
  instanceUuid: string | null;
  status: "COMPLETED" | "FAILED";
  /** Why it failed (null when it completed). */
  reason: string | null;
}

/**
 * Whether an ARQ is in BIND_STARTED after an event of the log, given whether it was before:
 * ArqBindStarted starts a bind; ArqBound completes it; ArqBindFailed, ArqUnbound and ArqDeleted end
 * it; a created ARQ is not binding; any other event leaves the ARQ as it was.
 */
export function bindingAfter(e: { readonly type: string }, wasBinding: boolean): boolean {
  switch (e.type) {
    case "ArqBindStarted":
      return true;
    case "ArqCreated":
    case "ArqBound":
    case "ArqBindFailed":
    case "ArqUnbound":
    case "ArqDeleted":
      return false;
    default:
      return wasBinding;
  }
}

export class BindResolutions {
  /** ARQs in BIND_STARTED: uuid -> instance. */
  private readonly binding = new Map<string, string | null>();

  /**
   * Of the events about to be fed (in order), those whose ARQ's state before them must be learned
   * first: the first event of each ARQ, when it is a failure of an ARQ not known to be binding and
   * `matters` (e.g. it is recent enough to be announced).
   */
  mustLearn<E extends ArqEvent>(events: readonly E[], matters: (e: E) => boolean = () => true): E[] {
    const first = new Set<string>();
    const out: E[] = [];
    for (const e of events) {
      const u = e.data.arqUuid;
      if (first.has(u)) continue;
      first.add(u);
      if (e.type === "ArqBindFailed" && matters(e) && !this.binding.has(u)) out.push(e);
    }
    return out;
  }

  /** The ARQ is in BIND_STARTED for this instance, as of the next event to be fed. */
  learnBinding(arqUuid: string, instanceUuid: string | null): void {
    this.binding.set(arqUuid, instanceUuid);
  }

  /** Feeds the next ARQ event; returns the bind it resolves, if it resolves one. */
  next(e: ArqEvent): BindResolution | null {
    const u = e.data.arqUuid;
    const wasBinding = this.binding.has(u);
    if (bindingAfter(e, wasBinding)) {
      if (e.type === "ArqBindStarted") this.binding.set(u, e.data.instanceUuid);
      return null;
    }
    const resolution = this.resolution(e, wasBinding);
    if (wasBinding) this.binding.delete(u);
    return resolution;
  }

  /** Forgets every ARQ (a follower that starts over from an earlier or later position). */
  clear(): void {
    this.binding.clear();
  }

  /** What an event that leaves an ARQ not binding resolves: a completion, or the failure of a bind seen. */
  private resolution(e: ArqEvent, wasBinding: boolean): BindResolution | null {
    const u = e.data.arqUuid;
    if (e.type === "ArqBound") return { arqUuid: u, instanceUuid: e.data.instanceUuid, status: "COMPLETED", reason: null };
    if (e.type !== "ArqBindFailed" || !wasBinding) return null;
    return { arqUuid: u, instanceUuid: e.data.instanceUuid ?? this.binding.get(u) ?? null, status: "FAILED", reason: e.data.reason };
  }

  /** ARQs known to be in BIND_STARTED. */
  get binds(): number {
    return this.binding.size;
  }
}
