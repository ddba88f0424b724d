/**
 * A project's quota: limits per resource class, and the usage its ARQs claim. A claim is decided
 * against the usage the stream holds, and appended at the stream's exact revision: two creations
 * racing for the last places are serialised by the log, and the one decided on a stale state is
 * decided again. Claims and releases are idempotent per ARQ.
 */
import { assertNever, type Decider } from "../shared/decider.js";
import { DomainError } from "../shared/types.js";
import { quotaRefusal } from "../arqs/quota.js";
import { ARQS_CLASS } from "./amounts.js";
import type { Amounts, QuotaEvent } from "./events.js";

/** Most a limit may be. */
export const MAX_QUOTA_LIMIT = 10_000_000;

export interface QuotaState {
  /** The project's own limits (classes not named follow the defaults). */
  limits: Readonly<Record<string, number>>;
  /** Each live ARQ's claim. */
  claims: ReadonlyMap<string, Amounts>;
  usage: Readonly<Record<string, number>>;
  /** Whether the stream has any event: the ARQs made before it are counted only by its first (Backfill). */
  started: boolean;
}

export type QuotaCommand =
  | { type: "SetLimits"; data: { projectId: string; limits: Readonly<Record<string, number | null>>; at: string } }
  /** `defaults`: the service's limits for the classes the project has none of its own for. */
  | { type: "Claim"; data: { projectId: string; claims: ReadonlyArray<{ arqUuid: string; amounts: Amounts }>; defaults: Readonly<Record<string, number>>; at: string } }
  | { type: "Release"; data: { projectId: string; arqUuids: readonly string[]; at: string } }
  /** The project's ARQs made before its quota stream: claimed once, as the stream's first event, whatever the limits. */
  | { type: "Backfill"; data: { projectId: string; claims: ReadonlyArray<{ arqUuid: string; amounts: Amounts }>; at: string } };

export const initialQuotaState = (): QuotaState => ({ limits: {}, claims: new Map(), usage: {}, started: false });

/** The limit on each class for a project with this state (own limits over the defaults). */
export function effectiveLimits(state: QuotaState, defaults: Readonly<Record<string, number>>): Record<string, number> {
  return { ...defaults, ...state.limits };
}

function addTo(usage: Record<string, number>, amounts: Amounts, sign: 1 | -1): void {
  for (const [cls, n] of Object.entries(amounts)) {
    const v = (usage[cls] ?? 0) + sign * n;
    if (v === 0) delete usage[cls];
    else usage[cls] = v;
  }
}

export function evolveQuota(before: QuotaState, event: QuotaEvent): QuotaState {
  const state = before.started ? before : { ...before, started: true };
  switch (event.type) {
    case "QuotaLimitsSet": {
      const limits: Record<string, number> = { ...state.limits };
      for (const [cls, n] of Object.entries(event.data.limits)) {
        if (n === null) delete limits[cls];
        else limits[cls] = n;
      }
      return { ...state, limits };
    }
    case "QuotaClaimed":
    case "QuotaBackfilled": {
      const claims = new Map(state.claims);
      const usage = { ...state.usage };
      for (const c of event.data.claims) {
        if (claims.has(c.arqUuid)) continue;
        claims.set(c.arqUuid, c.amounts);
        addTo(usage, c.amounts, 1);
      }
      return { ...state, claims, usage };
    }
    case "QuotaReleased": {
      const claims = new Map(state.claims);
      const usage = { ...state.usage };
      for (const id of event.data.arqUuids) {
        const amounts = claims.get(id);
        if (!amounts) continue;
        claims.delete(id);
        addTo(usage, amounts, -1);
      }
      return { ...state, claims, usage };
    }
    default:
      return assertNever(event);
  }
}

/** The refusal of a claim that takes a class past its limit; null when it fits. */
export function claimRefusal(projectId: string, state: QuotaState, asking: Amounts, defaults: Readonly<Record<string, number>>): DomainError | null {
  const limits = effectiveLimits(state, defaults);
  for (const cls of Object.keys(asking).sort()) {
    const limit = limits[cls];
    const want = asking[cls]!;
    if (limit === undefined || want === 0) continue;
    const held = state.usage[cls] ?? 0;
    if (held + want <= limit) continue;
    if (cls === ARQS_CLASS) return quotaRefusal({ projectId, held, asking: want, limit })!;
    return new DomainError(
      "QUOTA_EXCEEDED",
      `project ${projectId} uses ${held} of ${cls} (its limit is ${limit}); creating these accelerator requests asks for ${want} more: delete some first, or ask an administrator to raise the limit`,
      undefined,
      { projectId, resourceClass: cls, held, asking: want, limit },
    );
  }
  return null;
}

export function decideQuota(command: QuotaCommand, state: QuotaState): QuotaEvent[] {
  switch (command.type) {
    case "SetLimits": {
      for (const [cls, n] of Object.entries(command.data.limits)) {
        if (!/^[A-Z0-9_]{1,255}$/.test(cls)) throw new DomainError("BAD_USER_INPUT", `a resource class is upper-case letters, digits and underscores (got ${JSON.stringify(cls)})`, "limits.resourceClass");
        if (n !== null && (!Number.isInteger(n) || n < 0 || n > MAX_QUOTA_LIMIT)) {
          throw new DomainError("BAD_USER_INPUT", `the limit on ${cls} must be a whole number from 0 to ${MAX_QUOTA_LIMIT} (got ${n})`, "limits.limit");
        }
      }
      return Object.keys(command.data.limits).length === 0 ? [] : [{ type: "QuotaLimitsSet", data: { ...command.data } }];
    }
    case "Claim": {
      const { projectId, defaults, at } = command.data;
      const claims = command.data.claims.filter((c) => !state.claims.has(c.arqUuid));
      if (claims.length === 0) return [];
      const asking: Record<string, number> = {};
      for (const c of claims) addTo(asking, c.amounts, 1);
      const refused = claimRefusal(projectId, state, asking, defaults);
      if (refused) throw refused;
      return [{ type: "QuotaClaimed", data: { projectId, claims, at } }];
    }
    case "Backfill": {
      if (state.started) return [];
      const { projectId, claims, at } = command.data;
      return [{ type: "QuotaBackfilled", data: { projectId, claims: [...claims], at } }];
    }
    case "Release": {
      const arqUuids = command.data.arqUuids.filter((id) => state.claims.has(id));
      return arqUuids.length === 0 ? [] : [{ type: "QuotaReleased", data: { projectId: command.data.projectId, arqUuids, at: command.data.at } }];
    }
    default:
      return assertNever(command);
  }
}

export const quotaDecider: Decider<QuotaCommand, QuotaState, QuotaEvent> = {
  initialState: initialQuotaState,
  evolve: evolveQuota,
  decide: decideQuota,
};
