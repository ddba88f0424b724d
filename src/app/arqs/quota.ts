/** What creating ARQs needs to check a project's quota (src/domain/arqs/quota.ts). */
import type { CommandContext } from "../../domain/shared/types.js";

export interface ArqQuota {
  /** Most ARQs a project may hold; 0: no quota. */
  readonly limit: number;
  /**
   * The ARQs the project holds, as the read models show them once they reflect the log up to
   * `upTo` (when given). Throws when that cannot be known in time: the creation is then refused.
   */
  held(projectId: string, upTo?: bigint): Promise<number>;
  /**
   * Resolves once the read models reflect the log up to `upTo` (or after their timeout; never
   * rejects): a creation refused after it wrote answers once its ARQs are gone from them, so the
   * caller's next read does not count them.
   */
  settled(upTo: bigint): Promise<void>;
}

/** The project whose quota a creation counts against; null when none applies (admins and the compute service act for every project). */
export function quotaProject(quota: ArqQuota | undefined, ctx: CommandContext): string | null {
  if (!quota || quota.limit === 0 || ctx.isAdmin || !ctx.projectId) return null;
  return ctx.projectId;
}
