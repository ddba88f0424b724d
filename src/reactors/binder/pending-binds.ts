import { causeOf, type Cause } from "../../app/arqs/bind-cause.js";
import { bindingAfter } from "../../domain/arqs/bind-resolutions.js";
import type { RecordedEvent } from "../../infra/eventstore/port.js";

/** What the binder knows of one bind in flight. */
export interface PendingBind {
  arqUuid: string;
  hostname: string;
  /** ms since epoch when the bind started (from the event's metadata). */
  startedAt: number;
  /** What caused the binder's steps: the bind's request and its ArqBindStarted event (trace). */
  cause: Cause;
}

/**
 * Folds the ARQ events of the log into the binds that are in flight: the ARQs in BIND_STARTED, by
 * the domain's rule (`bindingAfter`). Pure bookkeeping; the binder decides what to do with it.
 */
export class PendingBinds {
  private readonly pending = new Map<string, PendingBind>();

  /** Returns the bind the event started, if it started one. */
  apply(e: RecordedEvent): PendingBind | undefined {
    const data = e.data as { arqUuid?: string; hostname?: string };
    if (bindingAfter(e, false)) {
      const at = Date.parse(e.metadata.at);
      const bind = { arqUuid: data.arqUuid!, hostname: data.hostname!, startedAt: Number.isNaN(at) ? e.recordedAt.getTime() : at, cause: causeOf(e) };
      this.pending.set(bind.arqUuid, bind);
      return bind;
    }
    if (!bindingAfter(e, true)) this.pending.delete(data.arqUuid!);
    return undefined;
  }

  /** Puts back a bind from a snapshot of the fold. */
  restore(bind: PendingBind): void {
    this.pending.set(bind.arqUuid, bind);
  }

  has(arqUuid: string): boolean {
    return this.pending.has(arqUuid);
  }

  get(arqUuid: string): PendingBind | undefined {
    return this.pending.get(arqUuid);
  }

  all(): PendingBind[] {
    return [...this.pending.values()];
  }

  get size(): number {
    return this.pending.size;
  }
}

export interface LostHolder {
  arqUuid: string;
  reason: string;
  cause: Cause;
}

/**
 * ARQs whose attach handle was lost (its device or the handle itself left the host's report while
 * allocated) and that still hold it: the binder fails them. A later unbind, delete, failure or new
 * bind of the ARQ settles it, so replaying the log never fails an ARQ that has moved on.
 */
export class LostHolders {
  private readonly lost = new Map<string, { reason: string; cause: Cause }>();

  /** Returns the ARQs the event newly marks as holding a lost handle, with the reason. */
  apply(e: RecordedEvent): LostHolder[] {
    const data = e.data as { arqUuid?: string; arqUuids?: string[]; hostname?: string; deviceUuid?: string; handleUuid?: string };
    switch (e.type) {
      case "DeviceLost":
        return this.mark(data.arqUuids ?? [], `device ${data.deviceUuid} on ${data.hostname} left the host's inventory while in use`, causeOf(e));
      case "AttachHandleLost":
        return this.mark([data.arqUuid!], `attach handle ${data.handleUuid} on ${data.hostname} left the host's inventory while in use`, causeOf(e));
      case "ArqBindFailed":
      case "ArqUnbound":
      case "ArqDeleted":
      case "ArqBindStarted":
        this.lost.delete(data.arqUuid!);
        return [];
      default:
        return [];
    }
  }

  all(): LostHolder[] {
    return [...this.lost].map(([arqUuid, l]) => ({ arqUuid, ...l }));
  }

  /** Puts back a lost holder from a snapshot of the fold. */
  restore({ arqUuid, reason, cause }: LostHolder): void {
    this.lost.set(arqUuid, { reason, cause });
  }

  private mark(arqUuids: string[], reason: string, cause: Cause): LostHolder[] {
    for (const a of arqUuids) this.lost.set(a, { reason, cause });
    return arqUuids.map((arqUuid) => ({ arqUuid, reason, cause }));
  }
}

/** A programming request in flight, as the binder times it. */
export interface InFlightRequest {
  requestId: string;
  hostname: string;
  deployableUuid: string;
  /** ms since epoch when it was requested (from the event's metadata). */
  requestedAt: number;
  /** Its request and its RegionProgrammingRequested event: an abandon carries them (trace). */
  cause: Cause;
}

/**
 * Folds the host streams' programming events into the requests in flight, and says which binds
 * waited for a request that closed (programmed, failed or abandoned): the binder runs them again.
 */
export class ProgrammingRequests {
  private readonly inFlight = new Map<string, InFlightRequest>();

  /** The ARQs that waited for the request this event closes (none for other events). */
  apply(e: RecordedEvent): string[] {
    const data = e.data as { requestId?: string; hostname?: string; deployableUuid?: string; arqUuids?: string[] };
    switch (e.type) {
      case "RegionProgrammingRequested": {
        const at = Date.parse(e.metadata.at);
        this.inFlight.set(data.requestId!, {
          requestId: data.requestId!,
          hostname: data.hostname!,
          deployableUuid: data.deployableUuid!,
          requestedAt: Number.isNaN(at) ? e.recordedAt.getTime() : at,
          cause: causeOf(e),
        });
        return [];
      }
      case "RegionProgrammed":
      case "RegionProgrammingFailed":
      case "RegionProgrammingAbandoned":
        this.inFlight.delete(data.requestId!);
        return data.arqUuids ?? [];
      default:
        return [];
    }
  }

  all(): InFlightRequest[] {
    return [...this.inFlight.values()];
  }

  /** Puts back a request from a snapshot of the fold. */
  restore(request: InFlightRequest): void {
    this.inFlight.set(request.requestId, request);
  }
}

/** What the binder folded, as a snapshot's lines (state-snapshots.ts) and back. Raise it when their meaning changes. */
export const BINDER_STATE_VERSION = 1;

export function binderState(pending: PendingBinds, lost: LostHolders, requests: ProgrammingRequests) {
  return {
    lines: (): string[] => [
      ...pending.all().map((b) => JSON.stringify(["bind", b])),
      ...lost.all().map((l) => JSON.stringify(["lost", l])),
      ...requests.all().map((r) => JSON.stringify(["request", r])),
    ],
    restore(lines: readonly string[]): void {
      for (const line of lines) {
        const [kind, value] = JSON.parse(line) as [string, never];
        if (kind === "bind") pending.restore(value);
        else if (kind === "lost") lost.restore(value);
        else if (kind === "request") requests.restore(value);
        else throw new Error(`unknown entry ${JSON.stringify(kind)}`);
      }
    },
  };
}
