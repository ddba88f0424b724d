import type { RecordedEvent } from "../eventstore/port.js";

/** What the binder knows of one bind in flight. */
export interface PendingBind {
  arqUuid: string;
  hostname: string;
  /** ms since epoch when the bind started (from the event's metadata). */
  startedAt: number;
}

/**
 * Folds the ARQ events of the log into the binds that are in flight: BIND_STARTED and not yet
 * resolved, unbound or deleted. Pure bookkeeping; the binder decides what to do with it.
 */
export class PendingBinds {
  private readonly pending = new Map<string, PendingBind>();

  /** Returns the bind the event started, if it started one. */
  apply(e: RecordedEvent): PendingBind | undefined {
    const data = e.data as { arqUuid?: string; hostname?: string };
    switch (e.type) {
      case "ArqBindStarted": {
        const at = Date.parse(e.metadata.at);
        const bind = { arqUuid: data.arqUuid!, hostname: data.hostname!, startedAt: Number.isNaN(at) ? e.recordedAt.getTime() : at };
        this.pending.set(bind.arqUuid, bind);
        return bind;
      }
      case "ArqBound":
      case "ArqBindFailed":
      case "ArqUnbound":
      case "ArqDeleted":
        this.pending.delete(data.arqUuid!);
        return undefined;
      default:
        return undefined;
    }
  }

  has(arqUuid: string): boolean {
    return this.pending.has(arqUuid);
  }

  all(): PendingBind[] {
    return [...this.pending.values()];
  }

  get size(): number {
    return this.pending.size;
  }
}
