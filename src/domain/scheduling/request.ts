/** A profile's groups as the engine reads them: alternatives, tolerations and topology matches. */
import { amountClassesOf, amountsOf } from "../shared/amount-keys.js";
import { ALTERNATIVES_KEY, MATCH_KEY, parseAlternatives, parseMatch, type Need } from "../shared/placement-keys.js";
import { tolerationsOf } from "../shared/tolerations.js";
import type { GroupRequest, PlacementRequest } from "./types.js";

type Group = Readonly<Record<string, string>>;

/**
 * The request of a profile's groups. A stored group was validated; should a key still not parse,
 * the group asks for what nothing offers (fails closed) rather than for less than it said.
 */
export function requestOf(groups: readonly Group[], enabled = true): PlacementRequest {
  return { groups: groups.map(groupRequestOf), enabled };
}

export function groupRequestOf(group: Group): GroupRequest {
  const own = ownNeed(group);
  let alternatives: Need[] = [own];
  let match: GroupRequest["match"] = [];
  try {
    const extra = group[ALTERNATIVES_KEY];
    if (extra !== undefined) alternatives = [own, ...parseAlternatives(extra)];
    const m = group[MATCH_KEY];
    if (m !== undefined) match = parseMatch(m);
  } catch {
    alternatives = [UNMEETABLE];
  }
  return {
    alternatives,
    tolerations: tolerationsOf(group),
    match,
    functionId: group["accel:function_id"] ?? null,
    bitstreamId: group["accel:bitstream_id"] ?? null,
    byName: group["accel:function_name"] !== undefined || group["accel:bitstream_name"] !== undefined,
  };
}

const UNMEETABLE: Need = { resourceClass: "", amount: 1, required: [], forbidden: [] };

function ownNeed(group: Group): Need {
  let resourceClass = "";
  let amount = 1;
  const required: string[] = [];
  const forbidden: string[] = [];
  const amounts = amountClassesOf(group);
  for (const [k, v] of Object.entries(group)) {
    if (k.startsWith("resources:") && amounts.has(k.slice("resources:".length))) continue;
    if (k.startsWith("resources:")) {
      resourceClass = k.slice("resources:".length);
      amount = Math.max(1, Number(v) || 1);
    } else if (k.startsWith("trait:")) (v === "forbidden" ? forbidden : required).push(k.slice("trait:".length));
  }
  const draws = amountsOf(group);
  return { resourceClass, amount, required, forbidden, ...(draws.length > 0 ? { draws } : {}) };
}
