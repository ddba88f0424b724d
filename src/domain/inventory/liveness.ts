/**
 * Agent liveness: whether a host's agent is reporting on time. An agent reports every period (its
 * --interval); a host is `LIVE` while its last report is younger than `staleAfter` periods, `STALE`
 * after that, and `GONE` after `goneAfter` periods. A host whose last report is not known (none
 * taken since the service started) is `STALE` until it reports, and `GONE` once the service has
 * waited `goneAfter` periods for it.
 */
export type Liveness = "LIVE" | "STALE" | "GONE";

export interface LivenessPolicy {
  /** The agents' reporting period, in seconds (AGENT_REPORT_INTERVAL_S). */
  intervalS: number;
  /** Periods without a report after which a host is stale (AGENT_STALE_AFTER_PERIODS). */
  staleAfter: number;
  /** Periods without a report after which a host is gone (AGENT_GONE_AFTER_PERIODS). */
  goneAfter: number;
}

export interface HostLiveness {
  state: Liveness;
  /** The last report taken (ISO-8601), or null when none is known. */
  lastReportAt: string | null;
  /** Seconds since that report, or since `knownSince` when none is known. */
  silentForS: number;
}

/**
 * `knownSince`: since when reports would have been seen (the service's start), for a host with no
 * known report. Times are ISO-8601 strings; `now` is the caller's clock.
 */
export function livenessOf(lastReportAt: string | null, knownSince: string, now: string, policy: LivenessPolicy): HostLiveness {
  const since = Date.parse(lastReportAt ?? knownSince);
  const silentForS = Math.max(0, (Date.parse(now) - since) / 1000);
  const periods = silentForS / policy.intervalS;
  const state: Liveness = periods >= policy.goneAfter ? "GONE" : lastReportAt === null || periods >= policy.staleAfter ? "STALE" : "LIVE";
  return { state, lastReportAt, silentForS: Math.round(silentForS) };
}

/** Why an agent cannot be counted on now, in words a person can act on; null for a live host. */
export function unavailableReason(hostname: string, l: HostLiveness, policy: LivenessPolicy): string | null {
  if (l.state === "LIVE") return null;
  const every = `its agent reports every ${policy.intervalS} s`;
  if (l.lastReportAt === null) {
    return `host ${hostname} has not reported since the service started ${l.silentForS} s ago (${every}): is \`cyborg-es agent --hostname ${hostname}\` running?`;
  }
  return `the agent of host ${hostname} is ${l.state.toLowerCase()}: its last report was at ${l.lastReportAt}, ${l.silentForS} s ago (${every}); start it again or check its logs`;
}

/** Checks a policy's numbers: a period, and gone after stale. */
export function validLivenessPolicy(p: LivenessPolicy): LivenessPolicy {
  if (!(p.intervalS > 0) || !(p.staleAfter > 0) || !(p.goneAfter > p.staleAfter)) {
    throw new RangeError(`agent liveness: the period must be positive and gone (${p.goneAfter}) must come after stale (${p.staleAfter})`);
  }
  return p;
}

/**
 * Whether a bind that needs its region programmed should fail at once rather than wait for an
 * agent: a host known to have stopped reporting (stale with a last report, or gone). A host merely
 * not heard from since the service started is not refused: its next report is due within a period.
 */
export function cannotProgram(l: HostLiveness): boolean {
  return l.state === "GONE" || (l.state === "STALE" && l.lastReportAt !== null);
}
