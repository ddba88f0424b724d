import type { Principal, Role } from "./tokens.js";

/**
 * Who may do what: Cyborg's current policy (cyborg-reference section 6) including its 2026
 * security fixes. Resolvers name a rule; the auth checker and resolvers consult this one table.
 */
export const POLICY = {
  "device_profile:read": ["admin", "manager", "member", "reader", "service"],
  "device_profile:write": ["admin"],
  // Hardware is readable by admins and managers; the scheduler (service) reads resource providers
  // as it would read them from Placement.
  "hardware:read": ["admin", "manager"],
  "resource_provider:read": ["admin", "manager", "service"],
  "device:status": ["admin"],
  // Attribute writes (REST): admin, as in Cyborg since 2026.
  "attribute:write": ["admin"],
  "inventory:report": ["admin", "agent"],
  "arq:read": ["admin", "manager", "member", "reader", "service"],
  "arq:create": ["admin", "manager", "member", "service"],
  "arq:delete": ["admin", "manager", "member", "service"],
  // Binding, unbinding and deleting by instance are Nova's alone (CVE-2026-40214).
  "arq:bind": ["service"],
  // Inline specs make a (content-named) profile: not for every project member.
  "arq:create_inline": ["admin", "service"],
  // What the compute service did to an instance (os-acc).
  "instance:operate": ["service"],
  "host:status": ["admin", "manager", "service"],
  // A bind that names the ARQ's project (REST /project_id, microversion 2.1): admins only, as in Cyborg.
  "arq:bind_project": ["admin"],
  "audit:read": ["admin"],
  // Project quotas (docs/quotas.md): admins set them; a project reads its own (checked in the resolver).
  "quota:write": ["admin"],
  // FPGA bitstreams (the catalogue) and programming (Cyborg's deployable:program is admin).
  "bitstream:read": ["admin", "manager"],
  "bitstream:write": ["admin"],
  "deployable:program": ["admin"],
  // A host's agent takes its programming requests and reports their outcome (its own host only).
  "programming:agent": ["admin", "agent"],
} as const satisfies Record<string, readonly Role[]>;

export type Rule = keyof typeof POLICY;

export function allows(p: Principal, rule: Rule): boolean {
  return (POLICY[rule] as readonly Role[]).some((r) => p.roles.has(r));
}

/** Admins and the compute service act across projects; everyone else sees their own project's ARQs. */
export function seesAllProjects(p: Principal): boolean {
  return p.roles.has("admin") || p.roles.has("service");
}

/** The project an ARQ list is confined to: undefined for all projects; a token without a project sees none. */
export function arqProjectScope(p: Principal): string | undefined {
  return seesAllProjects(p) ? undefined : (p.projectId ?? "\u0000none");
}

/** ARQs belong to a project: only its tokens, admins and the compute service see them. */
export function canSeeArq(p: Principal, arqProjectId: unknown): boolean {
  return seesAllProjects(p) || arqProjectId === p.projectId;
}


/** Rules that are one service's job, and what to tell the caller who tries them. */
const JOB_OF: Partial<Record<Rule, string>> = {
  "arq:bind": "binding is the compute service's (Nova's) step: use the service token (role service), as Nova does",
  "instance:operate": "acting on an instance is the compute service's (Nova's) step: use the service token (role service)",
  "inventory:report": "inventory is reported by the host's agent: use the agent token of that host (role agent), or an admin token",
  "programming:agent": "programming requests are the host agent's: use the agent token of that host (role agent)",
};

/** How to get past a refusal of `rule`: the token to use instead (the end of a FORBIDDEN message). */
export function fixForRule(rule: Rule): string {
  return JOB_OF[rule] ?? `use a token whose roles include ${POLICY[rule].join(" or ")}`;
}
