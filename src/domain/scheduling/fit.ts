/**
 * Whether one provider can take one way of meeting a group, and how many more times: the one
 * rule every decision, explanation and capacity count goes through (`providerRoom`, cheap, no
 * allocation; `providerFit` adds the words). Room is the free attach handles on a provider
 * offering the class, and what its device's capacities can still give the group's draws.
 */
import { tolerates, type Toleration } from "../shared/tolerations.js";
import type { CandidateProvider, Need, Rule, RuledOut } from "./types.js";

export type Fit = { ok: true; room: number } | ({ ok: false } & RuledOut);

/** States that take nothing new whatever the tolerations (a taint's states are the TAINT rule's). */
const CLOSED_STATES = new Set(["FAILED", "CLEANING", "QUALIFYING", "LOST"]);

/**
 * Whether a request that tolerates no taint could use the provider at all: its device takes new
 * work and carries no taint. Its free handles then bound what such a request gets there.
 */
export const openToAll = (p: CandidateProvider): boolean => p.taints.length === 0 && !CLOSED_STATES.has(p.lifecycle);

/**
 * How many more times the provider can take `need` (at least 1), or the first rule that rules it
 * out. `used`: handles of this provider already given to other groups of the same choice.
 */
export function providerRoom(p: CandidateProvider, need: Need, tolerations: readonly Toleration[], used = 0): number | Rule {
  if (p.resourceClass !== need.resourceClass) return "RESOURCE_CLASS";
  for (const t of need.required) if (!p.traits.has(t)) return "TRAIT_MISSING";
  for (const t of need.forbidden) if (p.traits.has(t)) return "TRAIT_FORBIDDEN";
  if (CLOSED_STATES.has(p.lifecycle)) return "LIFECYCLE";
  for (const t of p.taints) if (!tolerates(tolerations, t)) return "TAINT";
  const room = Math.floor((p.free - used) / need.amount);
  if (room < 1) return "NO_FREE_HANDLE";
  let fits = room;
  for (const d of need.draws ?? []) fits = Math.min(fits, Math.floor((p.capacityFree?.get(d.resourceClass) ?? 0) / (d.amount * need.amount)));
  return fits < 1 ? "CAPACITY" : fits;
}

export function providerFit(p: CandidateProvider, need: Need, tolerations: readonly Toleration[], used = 0): Fit {
  const room = providerRoom(p, need, tolerations, used);
  if (typeof room === "number") return { ok: true, room };
  return { ok: false, rule: room, ...words(room, p, need, tolerations, used) };
}

function words(rule: Rule, p: CandidateProvider, need: Need, tolerations: readonly Toleration[], used: number): { message: string; change: string } {
  switch (rule) {
    case "RESOURCE_CLASS":
      return { message: `it offers ${p.resourceClass}, the group asks for ${need.resourceClass || "a class it cannot name"}`, change: `a provider offering ${need.resourceClass}` };
    case "TRAIT_MISSING": {
      const missing = need.required.filter((t) => !p.traits.has(t)).join(", ");
      return { message: `it lacks required trait ${missing}`, change: `trait ${missing} on the provider, or the group not requiring it` };
    }
    case "TRAIT_FORBIDDEN": {
      const carried = need.forbidden.filter((t) => p.traits.has(t)).join(", ");
      return { message: `it carries forbidden trait ${carried}`, change: `trait ${carried} removed from the provider, or the group not forbidding it` };
    }
    case "LIFECYCLE":
      return { message: `its device is ${p.lifecycle}`, change: "the device back to AVAILABLE (repair, clean or qualify it)" };
    case "TAINT": {
      const names = p.taints.filter((t) => !tolerates(tolerations, t)).map((t) => `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`).join(", ");
      return { message: `its device carries taint ${names}, not tolerated`, change: `the taint removed (untaintDevice), or accel:tolerations=${names} on the group` };
    }
    case "CAPACITY": {
      const short = (need.draws ?? []).find((d) => (p.capacityFree?.get(d.resourceClass) ?? 0) < d.amount * need.amount)!;
      const free = p.capacityFree?.get(short.resourceClass) ?? 0;
      const asked = short.amount * need.amount;
      return {
        message: `its device has ${free} ${short.resourceClass} free, the group draws ${asked}`,
        change: p.capacityFree?.has(short.resourceClass) ? `${asked - free} more ${short.resourceClass} free: an ARQ released` : `a device that reports ${short.resourceClass} as a capacity`,
      };
    }
    default: {
      const left = Math.max(0, p.free - used);
      return { message: `it has ${left} free handle(s), the group needs ${need.amount}`, change: `${need.amount - left} more free handle(s): an ARQ released` };
    }
  }
}
