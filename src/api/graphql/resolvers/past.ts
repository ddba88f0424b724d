import { PastQueries } from "../../../audit/past-queries.js";
import { allows } from "../../auth/policy.js";
import type { ApiContext } from "../context.js";
import { forbidden } from "../errors.js";

export const AS_OF = {
  nullable: true,
  description: "Time travel (needs audit:read): a log position or an ISO-8601 time; the answer is folded from the log as it was then",
} as const;

/** The past, when a query asks for it with asOf (admin: audit:read); undefined for the present. */
export function pastOf(ctx: ApiContext, asOf: string | null | undefined): PastQueries | undefined {
  if (asOf === undefined || asOf === null) return undefined;
  if (!allows(ctx.principal!, "audit:read")) throw forbidden("asOf (time travel needs audit:read)");
  return new PastQueries(ctx.services.auditStore ?? ctx.services.store, ctx.services.readStore);
}
