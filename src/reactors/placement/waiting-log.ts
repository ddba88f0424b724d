/**
 * When the Placement sync tells the operator about a host Placement cannot match: once when the
 * host starts waiting, again when the reason changes, and otherwise at most once per quiet
 * interval (with how many refusals it kept quiet about), not once per event or retry round: a
 * host without a compute node would otherwise log a line for every change of its inventory and
 * every PLACEMENT_RETRY_S. A host that matches again is forgotten, so its next refusal is news.
 */

/** A refusal to tell now, and what was left untold since the last line. */
export interface WaitingNews {
  /** Refusals of this host not logged since the last line about it. */
  unlogged: number;
  /** When its last line was logged (ISO), if one was. */
  lastLoggedAt: string | null;
}

interface Told {
  reason: string;
  atMs: number;
  unlogged: number;
}

/** A line about a host still refused for the same reason, at most this often by default. */
export const WAITING_LOG_QUIET_MS = 60 * 60_000;

export class WaitingLog {
  private readonly told = new Map<string, Told>();

  constructor(
    private readonly quietMs = WAITING_LOG_QUIET_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The host was refused for `reason`: what to tell, or null to stay quiet. */
  refused(host: string, reason: string): WaitingNews | null {
    const at = this.now();
    const last = this.told.get(host);
    if (last && last.reason === reason && at - last.atMs < this.quietMs) {
      last.unlogged++;
      return null;
    }
    this.told.set(host, { reason, atMs: at, unlogged: 0 });
    return { unlogged: last?.unlogged ?? 0, lastLoggedAt: last ? new Date(last.atMs).toISOString() : null };
  }

  /** The host matches again (or is gone): its next refusal is logged at once. */
  forget(host: string): void {
    this.told.delete(host);
  }
}
