/**
 * Whether a resource provider (a deployable) fits the request group an ARQ was made from: it
 * offers one of the group's resource classes (`resources:<RC>`), carries every required trait
 * (`trait:<T>=required`) and none of the forbidden ones (`trait:<T>=forbidden`). Placement checks
 * this when the scheduler picks the provider; a bind checks it again, so a provider named by hand
 * is held to the group as well. Room (a free handle) is the allocation's own check.
 */
import { DomainError } from "../shared/types.js";
import type { DeployableNode } from "./host-tree.js";
import { providerTraits } from "./resource-providers.js";
import { ALTERNATIVES_KEY, parseAlternatives } from "../shared/placement-keys.js";
import { amountClassesOf, amountsOf, type AmountNeed } from "../shared/amount-keys.js";

/** The `reason` in a refusal's details, for clients that tell a mismatch from other bad input. */
export const TARGET_MISMATCH = "TARGET_MISMATCH";

export interface TargetRequirements {
  resourceClasses: readonly string[];
  required: readonly string[];
  forbidden: readonly string[];
  /** The group's `accel:alternatives`: a provider meeting one of them fits as well. */
  alternatives?: readonly TargetRequirements[];
  /** The amounts each ARQ of the group draws from its device's capacities (shared/amount-keys.ts), beside its handle. */
  amounts?: readonly AmountNeed[];
}

/** A group's `resources:` and `trait:` keys (names as profile validation normalised them). */
export function requirementsOf(group: Readonly<Record<string, string>>): TargetRequirements {
  const resourceClasses: string[] = [];
  const required: string[] = [];
  const forbidden: string[] = [];
  const amountClasses = amountClassesOf(group);
  for (const [key, value] of Object.entries(group)) {
    if (key.startsWith("resources:")) {
      if (!amountClasses.has(key.slice("resources:".length))) resourceClasses.push(key.slice("resources:".length));
    }
    // Validation admits only required and forbidden; anything else is held as required (fails closed).
    else if (key.startsWith("trait:")) (value === "forbidden" ? forbidden : required).push(key.slice("trait:".length));
  }
  const alternatives = alternativesOf(group);
  const amounts = amountsOf(group);
  return { resourceClasses, required, forbidden, ...(alternatives.length > 0 ? { alternatives } : {}), ...(amounts.length > 0 ? { amounts } : {}) };
}

/** The alternatives' requirements; a stored group was validated, so one that does not parse adds none (fails closed). */
function alternativesOf(group: Readonly<Record<string, string>>): TargetRequirements[] {
  const raw = group[ALTERNATIVES_KEY];
  if (raw === undefined) return [];
  try {
    return parseAlternatives(raw).map((n) => ({ resourceClasses: [n.resourceClass], required: n.required, forbidden: n.forbidden }));
  } catch {
    return [];
  }
}

function meets(rc: string | null, traits: ReadonlySet<string>, needs: TargetRequirements): boolean {
  const classOk = needs.resourceClasses.length === 0 || (rc !== null && needs.resourceClasses.includes(rc));
  return classOk && needs.required.every((t) => traits.has(t)) && !needs.forbidden.some((t) => traits.has(t));
}

/**
 * Refuses a provider that does not fit: BAD_USER_INPUT on `deviceRpUuid`, details
 * `{reason: "TARGET_MISMATCH", deviceRpUuid, resourceClass, missing, forbidden}` naming what is wrong.
 */
export function checkTargetFits(deployable: DeployableNode, hostname: string, needs: TargetRequirements): void {
  const rc = deployable.attributes.get("rc")?.value ?? null;
  const traits = providerTraits(deployable);
  if ((needs.alternatives ?? []).some((alt) => meets(rc, traits, alt))) return;
  const classMissing = needs.resourceClasses.length > 0 && (rc === null || !needs.resourceClasses.includes(rc));
  const missing = needs.required.filter((t) => !traits.has(t));
  const forbidden = needs.forbidden.filter((t) => traits.has(t));
  if (!classMissing && missing.length === 0 && forbidden.length === 0) return;
  const problems = [
    ...(classMissing ? [`it offers ${rc === null ? "no resource class" : `resource class ${rc}`}, the group asks for ${needs.resourceClasses.join(" or ")}`] : []),
    ...(missing.length > 0 ? [`it lacks required trait${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`] : []),
    ...(forbidden.length > 0 ? [`it carries forbidden trait${forbidden.length > 1 ? "s" : ""} ${forbidden.join(", ")}`] : []),
  ];
  throw new DomainError(
    "BAD_USER_INPUT",
    `Resource provider ${deployable.rpUuid} (deployable ${deployable.name} on host ${hostname}) does not fit the ARQ's request group: ${problems.join("; ")}`,
    "deviceRpUuid",
    {
      reason: TARGET_MISMATCH,
      deviceRpUuid: deployable.rpUuid,
      resourceClass: classMissing ? { offered: rc, wanted: [...needs.resourceClasses] } : null,
      missing,
      forbidden,
    },
  );
}

/**
 * Which of the group's ways the provider meets: 0 its own request, i for the i-th of
 * accel:alternatives; null for a group without alternatives (or a provider that meets none).
 */
export function alternativeMet(deployable: DeployableNode, needs: TargetRequirements): number | null {
  if (!needs.alternatives || needs.alternatives.length === 0) return null;
  const rc = deployable.attributes.get("rc")?.value ?? null;
  const traits = providerTraits(deployable);
  if (meets(rc, traits, needs)) return 0;
  const i = needs.alternatives.findIndex((alt) => meets(rc, traits, alt));
  return i < 0 ? null : i + 1;
}

export function isTargetMismatch(err: unknown): err is DomainError {
  return err instanceof DomainError && err.details?.reason === TARGET_MISMATCH;
}
