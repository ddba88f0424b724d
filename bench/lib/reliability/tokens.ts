/** One token per role of the policy table (and a second member in another project), for the reliability suite. */
export const ROLE_TOKENS = {
  admin: { token: "rel-admin-token-0123456789", roles: ["admin"], projectId: "p-admin", hostname: null },
  manager: { token: "rel-manager-token-0123456789", roles: ["manager"], projectId: "p1", hostname: null },
  member: { token: "rel-member-token-0123456789", roles: ["member"], projectId: "p1", hostname: null },
  member2: { token: "rel-member2-token-0123456789", roles: ["member"], projectId: "p2", hostname: null },
  reader: { token: "rel-reader-token-0123456789", roles: ["reader"], projectId: "p1", hostname: null },
  service: { token: "rel-service-token-0123456789", roles: ["service"], projectId: "service", hostname: null },
  agent: { token: "rel-agent-token-compute1-0123", roles: ["agent"], projectId: null, hostname: "compute1" },
} as const;

export type Who = keyof typeof ROLE_TOKENS;
export const WHO = Object.keys(ROLE_TOKENS) as Who[];

/** The AUTH_TOKENS_FILE content. */
export function tokenFileJson(): string {
  return JSON.stringify({ tokens: Object.entries(ROLE_TOKENS).map(([name, t]) => ({ name, ...t })) });
}
