/**
 * The placement engine's decision: every group of a request placed at once, on one host. Pure and
 * deterministic. Hosts are ranked as the weigher ranks them (weigher.ts: handles already running
 * what the groups need, then free handles), after the alternatives each choice took: a host
 * meeting every group with its first alternative comes before one that needs a later one.
 */
import { allowedBy, hostsToTry, type CandidateIndex } from "./candidates.js";
import { explain, type Explanation } from "./explain.js";
import { chooseOnHost, freeOfClass } from "./host-choice.js";
import type { CandidateHost, HostChoice, PlacementLimits, PlacementRequest } from "./types.js";

export type Decision = { ok: true; choices: HostChoice[] } | { ok: false; explanation: Explanation };

/** `maxChoices`: how many hosts to answer, best first (a lost race retries on the next). */
export function place(request: PlacementRequest, index: CandidateIndex, limits: PlacementLimits = {}, maxChoices = 5): Decision {
  const choices = request.enabled ? bestChoices(request, index, limits, maxChoices) : [];
  if (choices.length > 0) return { ok: true, choices };
  return { ok: false, explanation: explain(request, index, limits) };
}

function bestChoices(request: PlacementRequest, index: CandidateIndex, limits: PlacementLimits, maxChoices: number): HostChoice[] {
  const top: HostChoice[] = [];
  for (const host of hostsToTry(index, request, limits)) {
    if (host.stale || !allowedBy(limits, host.hostname)) continue;
    // A host whose providers could not give more than the last kept choice has cannot displace it.
    if (top.length === maxChoices && cannotBeat(host, request, top[top.length - 1]!)) continue;
    const choice = chooseOnHost(host, request);
    if (choice === null) continue;
    if (top.length === maxChoices && compareChoices(choice, top[top.length - 1]!) >= 0) continue;
    let i = top.length;
    while (i > 0 && compareChoices(choice, top[i - 1]!) < 0) i--;
    top.splice(i, 0, choice);
    if (top.length > maxChoices) top.pop();
  }
  return top;
}

/**
 * Whether the host is sure to rank after `kept`: `kept` took every group's first alternative, and
 * the free handles of every class the groups could use on the host (a bound of both its ready and
 * its free handles) are fewer than `kept`'s ready ones.
 */
function cannotBeat(host: CandidateHost, request: PlacementRequest, kept: HostChoice): boolean {
  if (kept.assignments.some((a) => a.alternative !== 0)) return false;
  let bound = 0;
  for (const g of request.groups) {
    let most = 0;
    for (const need of g.alternatives) most = Math.max(most, freeOfClass(host, need.resourceClass));
    bound += most;
  }
  return bound < kept.ready;
}

/** Earlier alternatives, then more ready handles, then more free ones, then the host's name. */
export function compareChoices(a: HostChoice, b: HostChoice): number {
  return altSum(a) - altSum(b) || b.ready - a.ready || b.free - a.free || (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0);
}

const altSum = (c: HostChoice) => c.assignments.reduce((s, a) => s + a.alternative, 0);
