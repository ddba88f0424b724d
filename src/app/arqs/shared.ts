/** What the ARQ use cases share: visibility, loading, input lists. */
import type { Arq } from "../../domain/arqs/arq.js";
import { liveArq } from "../../domain/arqs/decider.js";
import { DomainError, MAX_ID_LENGTH, type CommandContext } from "../../domain/shared/types.js";
import { aggregates, type Streams } from "../streams.js";

/** Admins (and service principals) see every ARQ; others their project's. A null project is admin-only. */
export function visibleTo(ctx: CommandContext, arq: Arq): boolean {
  return ctx.isAdmin === true || (arq.projectId !== null && arq.projectId === (ctx.projectId ?? null));
}

export const notFound = (uuid: string, field: string) => new DomainError("NOT_FOUND", `Accelerator request ${uuid} not found`, field);

/** Loads ARQs that must all exist and be visible (all or nothing). */
export async function loadVisible(s: Streams, ctx: CommandContext, uuids: readonly string[], field: (i: number) => string) {
  const loaded = await Promise.all(uuids.map((id) => s.load(aggregates.arq, id)));
  return loaded.map(({ state, revision, position }, i) => {
    const arq = liveArq(state);
    if (!arq || !visibleTo(ctx, arq)) throw notFound(uuids[i]!, field(i));
    return { arq, revision, position: position! };
  });
}

export function uuidList(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw new DomainError("BAD_USER_INPUT", `${field} must be a list of ARQ uuids`, field);
  value.forEach((v, i) => {
    if (typeof v !== "string" || v.length === 0 || v.length > MAX_ID_LENGTH) throw new DomainError("BAD_USER_INPUT", `an ARQ uuid of 1 to ${MAX_ID_LENGTH} characters is needed`, `${field}[${i}]`);
  });
  return [...new Set(value as string[])];
}
