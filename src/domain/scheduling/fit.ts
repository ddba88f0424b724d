/**
 * Whether one provider can take one way of meeting a group, and how many more times: the one
 * function every decision, explanation and capacity count goes through. Today room is the free
 * attach handles on a provider offering the class; partition counters extend it here.
 */
import { tolerates } from "../shared/tolerations.js";
import type { CandidateProvider, Need, RuledOut } from "./types.js";
import type { Toleration } from "../shared/tolerations.js";

export type Fit = { ok: true; room: number } | ({ ok: false } & RuledOut);

/** States that take nothing new whatever the tolerations (a taint's states are the TAINT rule's). */
const CLOSED_STATES = new Set(["FAILED", "CLEANING", "QUALIFYING"]);

/** `used`: handles of this provider already given to other groups of the same choice. */
export function providerFit(p: CandidateProvider, need: Need, tolerations: readonly Toleration[], used = 0): Fit {
  if (p.resourceClass !== need.resourceClass) {
    return no("RESOURCE_CLASS", `it offers ${p.resourceClass}, the group asks for ${need.resourceClass || "a class it cannot name"}`, `a provider offering ${need.resourceClass}`);
  }
  const missing = need.required.filter((t) => !p.traits.has(t));
  if (missing.length > 0) return no("TRAIT_MISSING", `it lacks required trait ${missing.join(", ")}`, `trait ${missing.join(", ")} on the provider, or the group not requiring it`);
  const carried = need.forbidden.filter((t) => p.traits.has(t));
  if (carried.length > 0) return no("TRAIT_FORBIDDEN", `it carries forbidden trait ${carried.join(", ")}`, `trait ${carried.join(", ")} removed from the provider, or the group not forbidding it`);
  if (CLOSED_STATES.has(p.lifecycle)) return no("LIFECYCLE", `its device is ${p.lifecycle}`, `the device back to AVAILABLE (repair, clean or qualify it)`);
  const blocking = p.taints.filter((t) => !tolerates(tolerations, t));
  if (blocking.length > 0) {
    const names = blocking.map((t) => `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`).join(", ");
    return no("TAINT", `its device carries taint ${names}, not tolerated`, `the taint removed (untaintDevice), or accel:tolerations=${names} on the group`);
  }
  const room = Math.floor((p.free - used) / need.amount);
  if (room < 1) return no("NO_FREE_HANDLE", `it has ${Math.max(0, p.free - used)} free handle(s), the group needs ${need.amount}`, `${need.amount - Math.max(0, p.free - used)} more free handle(s): an ARQ released`);
  return { ok: true, room };
}

function no(rule: RuledOut["rule"], message: string, change: string): Fit {
  return { ok: false, rule, message, change };
}
