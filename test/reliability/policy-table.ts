/**
 * The policy table as the role matrix reads it: for each query, mutation and subscription of the
 * schema, the rule of src/api/auth/policy.ts it is guarded by (from its @Authorized decorator,
 * or below for the one guard written in code), its argument-level rules, and docs/api.md's
 * "Who may do what" rows. An operation without a rule, or without a docs/api.md row, has no policy
 * row: the matrix fails on it.
 */
import { readFileSync } from "node:fs";
import type { GraphQLSchema } from "graphql";
import { getMetadataStorage } from "type-graphql";
import { rootFields, type RootKind } from "../../bench/lib/reliability/graphql-cases.js";
import { ROLE_TOKENS, WHO, type Who } from "../../bench/lib/reliability/tokens.js";
import { POLICY, seesAllProjects, type Rule } from "../../src/api/auth/policy.js";
import { ROLES, type Principal, type Role } from "../../src/api/auth/tokens.js";

/**
 * Guards written in code rather than as @Authorized (resolvers/bound-events.ts checks arq:read,
 * resolvers/programming-requests.ts programming:agent for programmingRequests and agentRequests).
 */
const RULES_IN_CODE: Record<string, Rule> = {
  "subscription.acceleratorRequestBound": "arq:read",
  "subscription.acceleratorRequestEvicted": "arq:read",
  "subscription.programmingRequests": "programming:agent",
  "subscription.agentRequests": "programming:agent",
};

/** Open to any valid token, outside the policy table: who a token is (resolvers/viewer.resolver.ts). */
export const ANY_TOKEN = "any valid token";
const OPEN_TO_ANY_TOKEN: Record<string, typeof ANY_TOKEN> = { "query.viewer": ANY_TOKEN };

export interface Operation {
  kind: RootKind;
  name: string;
  rule: Rule | typeof ANY_TOKEN | undefined;
}

export function operations(schema: GraphQLSchema): Operation[] {
  const storage = getMetadataStorage();
  const resolvers = [...storage.queries, ...storage.mutations, ...storage.subscriptions];
  return rootFields(schema).map(({ kind, field }) => {
    const meta = resolvers.find((r) => r.schemaName === field.name);
    const decorated = meta && storage.authorizedFields.find((a) => a.target === meta.target && a.fieldName === meta.methodName);
    const rule = (decorated?.roles[0] as Rule | undefined) ?? RULES_IN_CODE[`${kind}.${field.name}`] ?? OPEN_TO_ANY_TOKEN[`${kind}.${field.name}`];
    return { kind, name: field.name, rule };
  });
}

const principalOf = (who: Who): Principal => {
  const t = ROLE_TOKENS[who];
  return { principal: who, roles: new Set(t.roles as readonly Role[]), projectId: t.projectId, hostname: t.hostname };
};

/** The roles a rule lets through. */
export const rolesOfRule = (rule: Rule | typeof ANY_TOKEN): readonly Role[] => (rule === ANY_TOKEN ? ROLES : POLICY[rule]);

/** The callers a rule lets through. */
export const allowedBy = (rule: Rule | typeof ANY_TOKEN): Who[] => WHO.filter((w) => rolesOfRule(rule).some((r) => principalOf(w).roles.has(r)));

/**
 * Rules on one argument, beyond the operation's own (docs/api.md, "Who may do what"): the values to
 * send, and the callers they let through.
 */
export const ARGUMENT_RULES: Array<{ operation: string; label: string; args: Record<string, unknown>; allowed: Who[] }> = [
  { operation: "createAcceleratorRequests", label: "projectId", args: { projectId: "p-other" }, allowed: WHO.filter((w) => allowedBy("arq:create").includes(w) && seesAllProjects(principalOf(w))) },
  { operation: "projectQuota", label: "another project's", args: { projectId: "p-other" }, allowed: WHO.filter((w) => allowedBy("arq:read").includes(w) && seesAllProjects(principalOf(w))) },
  { operation: "deleteAcceleratorRequests", label: "instanceUuid", args: { instanceUuid: "2d4f5c3e-0000-4000-8000-000000000001" }, allowed: WHO.filter((w) => principalOf(w).roles.has("service")) },
  { operation: "deleteAcceleratorRequests", label: "arqUuids", args: { arqUuids: ["2d4f5c3e-0000-4000-8000-000000000002"] }, allowed: allowedBy("arq:delete") },
  { operation: "reportHostInventory", label: "another host than the agent's", args: { hostname: "compute2" }, allowed: WHO.filter((w) => allowedBy("inventory:report").includes(w) && !principalOf(w).roles.has("agent")) },
  {
    operation: "reportProgrammingResult",
    label: "another host than the agent's",
    args: { input: { hostname: "compute2", deployableUuid: "2d4f5c3e-0000-4000-8000-000000000003", requestId: "2d4f5c3e-0000-4000-8000-000000000004", ok: true } },
    allowed: WHO.filter((w) => allowedBy("programming:agent").includes(w) && !principalOf(w).roles.has("agent")),
  },
  {
    operation: "reportCleaningResult",
    label: "another host than the agent's",
    args: { input: { hostname: "compute2", deviceUuid: "2d4f5c3e-0000-4000-8000-000000000005", requestId: "2d4f5c3e-0000-4000-8000-000000000006", ok: true } },
    allowed: WHO.filter((w) => allowedBy("programming:agent").includes(w) && !principalOf(w).roles.has("agent")),
  },
  {
    operation: "reportPartitionResult",
    label: "another host than the agent's",
    args: { input: { hostname: "compute2", requestId: "2d4f5c3e-0000-4000-8000-000000000007", ok: true } },
    allowed: WHO.filter((w) => allowedBy("programming:agent").includes(w) && !principalOf(w).roles.has("agent")),
  },
];

export interface ReadmeRow {
  /** The operations of the row, as written: `name` or `name(argument)`. */
  operations: string[];
  roles: Set<Role>;
}

/** The rows of docs/api.md's "Who may do what" table, but the REST-only ones. */
export function readmeRows(readmePath: string): ReadmeRow[] {
  const text = readFileSync(readmePath, "utf8");
  const table = text.slice(text.indexOf("### Who may do what")).split("\n\n")[1] ?? "";
  return table
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [, ops = "", roles = ""] = line.split("|");
      return {
        operations: [...ops.matchAll(/`([A-Za-z]+(?:\([A-Za-z]+\))?)`/g)].map((m) => m[1]!),
        roles: new Set(ROLES.filter((r) => new RegExp(`\\b${r}\\b`).test(roles))),
      };
    });
}
