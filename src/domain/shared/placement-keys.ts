/**
 * The profile keys the placement engine reads beyond Placement's own (`resources:`, `trait:`):
 * a group's ranked alternatives (`accel:alternatives`) and the topology attributes its device must
 * share with the other groups' devices (`accel:match`). They live here, below device-profiles
 * (which validates them) and scheduling (which honours them), as the tolerations do.
 */
export const ALTERNATIVES_KEY = "accel:alternatives";
export const MATCH_KEY = "accel:match";
export const MAX_ALTERNATIVES = 8;

/** One way to meet a group: `amount` of `resourceClass` on one provider, with and without traits. */
export interface Need {
  resourceClass: string;
  amount: number;
  required: readonly string[];
  forbidden: readonly string[];
  /** What each ARQ of the group draws from the device's capacities beside its handle (amount-keys.ts). */
  draws?: readonly { resourceClass: string; amount: number }[];
}

/** The topology attributes a profile can require its groups' devices to share (`accel:match`). */
export const MATCH_ATTRIBUTES = ["numa_node", "pcie_root", "pcie_switch", "link_domain"] as const;
export type MatchAttribute = (typeof MATCH_ATTRIBUTES)[number];

const RC_RE = /^[A-Z0-9_]{1,255}$/;
const TRAIT_RE = /^CUSTOM_[A-Z0-9_]{1,248}$/;
const MAX_AMOUNT = 1024;

/**
 * Parses `accel:alternatives`: alternatives separated by `;`, in order of preference, each a
 * comma-separated list of `resources:<RC>=<N>` (exactly one) and `trait:<T>=required|forbidden`.
 * E.g. `resources:CUSTOM_GPU_L40S=1;resources:CUSTOM_GPU_T4=2,trait:CUSTOM_PCIE_GEN4=required`.
 * Throws an Error whose message names the alternative and what is wrong with it.
 */
export function parseAlternatives(raw: string): Need[] {
  const parts = raw.split(";").map((p) => p.trim());
  if (parts.length > MAX_ALTERNATIVES) throw new Error(`at most ${MAX_ALTERNATIVES} alternatives, got ${parts.length}`);
  return parts.map((part, i) => parseAlternative(part, i + 1));
}

function parseAlternative(part: string, n: number): Need {
  const form = "each alternative is resources:<RC>=<N> and any trait:<T>=required|forbidden, separated by commas";
  if (part === "") throw new Error(`alternative ${n} is empty; ${form}`);
  let resourceClass: string | null = null;
  let amount = 0;
  const required: string[] = [];
  const forbidden: string[] = [];
  for (const entry of part.split(",").map((e) => e.trim())) {
    const eq = entry.indexOf("=");
    const key = eq < 0 ? entry : entry.slice(0, eq);
    const value = eq < 0 ? "" : entry.slice(eq + 1);
    if (key.startsWith("resources:")) {
      if (resourceClass !== null) throw new Error(`alternative ${n} gives two resources: entries; ${form}`);
      resourceClass = key.slice("resources:".length);
      if (!RC_RE.test(resourceClass)) throw new Error(`alternative ${n}: resource class ${JSON.stringify(resourceClass)} must be upper-case letters, digits and "_"`);
      amount = Number(value);
      if (!/^[0-9]+$/.test(value) || amount < 1 || amount > MAX_AMOUNT) throw new Error(`alternative ${n}: the amount of ${resourceClass} must be a whole number from 1 to ${MAX_AMOUNT}, got ${JSON.stringify(value)}`);
    } else if (key.startsWith("trait:")) {
      const trait = key.slice("trait:".length);
      if (!TRAIT_RE.test(trait)) throw new Error(`alternative ${n}: trait ${JSON.stringify(trait)} must start with CUSTOM_ and hold upper-case letters, digits and "_"`);
      if (value !== "required" && value !== "forbidden") throw new Error(`alternative ${n}: trait ${trait} must be required or forbidden, got ${JSON.stringify(value)}`);
      (value === "required" ? required : forbidden).push(trait);
    } else {
      throw new Error(`alternative ${n}: unknown entry ${JSON.stringify(entry)}; ${form}`);
    }
  }
  if (resourceClass === null) throw new Error(`alternative ${n} names no resources:<RC>=<N>; ${form}`);
  return { resourceClass, amount, required, forbidden };
}

/** An alternative as `accel:alternatives` writes it. */
export function needText(need: Need): string {
  return [`resources:${need.resourceClass}=${need.amount}`, ...need.required.map((t) => `trait:${t}=required`), ...need.forbidden.map((t) => `trait:${t}=forbidden`)].join(",");
}

/** Parses `accel:match`: a comma-separated list of numa_node, pcie_root, pcie_switch, link_domain (each once). */
export function parseMatch(raw: string): MatchAttribute[] {
  const out: MatchAttribute[] = [];
  for (const entry of raw.split(",").map((e) => e.trim())) {
    if (!(MATCH_ATTRIBUTES as readonly string[]).includes(entry)) throw new Error(`unknown attribute ${JSON.stringify(entry)}; the attributes are ${MATCH_ATTRIBUTES.join(", ")}`);
    if (out.includes(entry as MatchAttribute)) throw new Error(`attribute ${entry} is given twice`);
    out.push(entry as MatchAttribute);
  }
  return out;
}
