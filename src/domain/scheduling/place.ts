/**
 * The placement engine's decision: every group of a request placed at once, on one host. Pure and
 * deterministic. Hosts are ranked as the weigher ranks them (weigher.ts: handles already running
 * what the groups need, then free handles), after the alternatives each choice took: a host
 * meeting every group with its first alternative comes before one that needs a later one.
 */
import { visitByBound } from "./bound-order.js";
import { explain, type Explanation } from "./explain.js";
import { chooseOnHost } from "./host-choice.js";
import { tieBreak } from "./spread.js";
import type { CandidateIndex, HostChoice, PlacementLimits, PlacementRequest } from "./types.js";

export type Decision = { ok: true; choices: HostChoice[] } | { ok: false; explanation: Explanation };

/** `maxChoices`: how many hosts to answer, best first (a lost race retries on the next). */
export function place(request: PlacementRequest, index: CandidateIndex, limits: PlacementLimits = {}, maxChoices = 5): Decision {
  const choices = request.enabled ? bestChoices(request, index, limits, maxChoices) : [];
  if (choices.length > 0) return { ok: true, choices };
  return { ok: false, explanation: explain(request, index, limits) };
}

/**
 * Hosts are tried in the order of the most their providers could give (`bound`, largest first:
 * bound-order.ts), so once the kept choices are full and a host's bound cannot beat the last of
 * them, no later host can either: the search stops there instead of weighing every host that
 * offers the classes.
 */
function bestChoices(request: PlacementRequest, index: CandidateIndex, limits: PlacementLimits, maxChoices: number): HostChoice[] {
  const top: HostChoice[] = [];
  visitByBound(index, request, limits, (host, most) => {
    if (top.length === maxChoices) {
      const last = top[top.length - 1]!;
      if (cannotBeat(most, last)) return false;
      if (canOnlyTie(most, last) && tieBreak(limits.spread, host.hostname, last.hostname) > 0) return true;
    }
    const choice = chooseOnHost(host, request, undefined, limits.spread);
    if (choice === null) return true;
    if (top.length === maxChoices && compareChoices(choice, top[top.length - 1]!, limits.spread) >= 0) return true;
    let i = top.length;
    while (i > 0 && compareChoices(choice, top[i - 1]!, limits.spread) < 0) i--;
    top.splice(i, 0, choice);
    if (top.length > maxChoices) top.pop();
    return true;
  });
  return top;
}

/** Whether a host of this bound is sure to rank after `kept`: `kept` took every group's first alternative and has more ready handles than the bound. */
function cannotBeat(hostBound: number, kept: HostChoice): boolean {
  if (kept.assignments.some((a) => a.alternative !== 0)) return false;
  return hostBound < kept.ready;
}

/**
 * Whether a host of this bound can at best tie with `kept` on the weigher's numbers: its ready and
 * free handles are at most its bound, which equals `kept`'s ready handles. Then the tie-break alone
 * decides, and a host that loses it is passed over without working out its choice (among many
 * hosts ranked equal, as on a fleet of identical hosts, that is most of them).
 */
function canOnlyTie(hostBound: number, kept: HostChoice): boolean {
  return hostBound === kept.ready && kept.assignments.every((a) => a.alternative === 0);
}

/** Earlier alternatives, then more ready handles, then more free ones, then the host's name (hashed with `spread`, when given: spread.ts). */
export function compareChoices(a: HostChoice, b: HostChoice, spread?: string | null): number {
  return altSum(a) - altSum(b) || b.ready - a.ready || b.free - a.free || tieBreak(spread, a.hostname, b.hostname);
}

const altSum = (c: HostChoice) => c.assignments.reduce((s, a) => s + a.alternative, 0);
