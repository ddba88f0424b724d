/**
 * The placement engine's read side, shared by GraphQL (explainPlacement, placementCapacity,
 * placeAcceleratorRequests): each host's resource providers and their devices from the read
 * models, as the engine's candidates (src/domain/scheduling/), kept across decisions and read
 * again where the models changed (kept-candidates.ts), and the placing of ARQs where the engine
 * chose, retried on the next choice when a bind loses a race.
 */
import { getProfileByName } from "../../projections/device-profiles/queries.js";
import type { ArqView } from "../domain/arqs/view.js";
import {
  capacity,
  explain,
  indexCandidates,
  place,
  requestOf,
  shortExplanation,
  withoutCandidates,
  type Capacity,
  type CandidateIndex,
  type Explanation,
  type PlacementLimits,
  type PlacementRequest,
} from "../domain/scheduling/index.js";
import { validateGroups } from "../domain/device-profiles/validation.js";
import { DomainError, type CommandContext } from "../domain/shared/types.js";
import type { ReadStore } from "../infra/readstore/port.js";
import type { Application } from "../app/application.js";
import { CandidatesFeed } from "./kept-candidates.js";

/** Hosts a request may name. */
export const MAX_PLACEMENT_HOSTS = 1000;
/** Binds tried, each on the engine's next choice, before a placement gives up. */
export const MAX_PLACEMENT_TRIES = 8;

export type RequestSpec = { deviceProfileName: string } | { groups: unknown };

/** The request of a profile (disabled: every host refused) or of inline groups, validated as a profile's. */
export async function placementRequest(store: ReadStore, spec: RequestSpec): Promise<PlacementRequest> {
  if ("groups" in spec) return requestOf(validateGroups(spec.groups));
  const profile = await getProfileByName(store, spec.deviceProfileName);
  if (!profile) throw new DomainError("NOT_FOUND", `no device profile named ${JSON.stringify(spec.deviceProfileName)}`, "deviceProfileName");
  return requestOf(profile.groups, profile.enabled);
}

const feeds = new WeakMap<ReadStore, CandidatesFeed>();

/**
 * The candidates kept for this read store (one per process: the API's guarded view), read again
 * only where the read models changed (kept-candidates.ts); with `hosts`, only those hosts.
 */
export async function placementCandidates(store: ReadStore, hosts?: readonly string[] | null): Promise<CandidateIndex> {
  if (hosts && hosts.length > MAX_PLACEMENT_HOSTS) throw new DomainError("BAD_USER_INPUT", `at most ${MAX_PLACEMENT_HOSTS} hosts per call, got ${hosts.length}`, "hosts");
  let feed = feeds.get(store);
  if (!feed) feeds.set(store, (feed = new CandidatesFeed(store)));
  const index = await feed.current();
  return hosts ? indexCandidates([...new Set(hosts)].flatMap((h) => index.byName.get(h) ?? [])) : index;
}

export async function explainPlacement(store: ReadStore, stale: (h: string) => boolean, spec: RequestSpec, limits: PlacementLimits, detail = 20): Promise<Explanation> {
  const [request, index] = await Promise.all([placementRequest(store, spec), placementCandidates(store, limits.hosts)]);
  return explain(request, index, { ...limits, stale }, Math.max(0, Math.min(detail, 200)));
}

export async function placementCapacity(
  store: ReadStore,
  stale: (h: string) => boolean,
  spec: RequestSpec,
  without: { hosts?: readonly string[]; devices?: readonly string[] } = {},
): Promise<Capacity> {
  const [request, index] = await Promise.all([placementRequest(store, spec), placementCandidates(store)]);
  return capacity(request, withoutCandidates(index, without), { stale });
}

/**
 * Creates the request's ARQs and binds them where the engine chose (createAndBindArqs: the deciders
 * check each allocation). A bind that loses a race (CONFLICT: the handle went to another since the
 * read models showed it free; refused at once, its ARQs deleted, rather than left for the binder
 * to fail) is decided again on the candidates as the read models show them once caught up with
 * the log (`catchUp`), at most MAX_PLACEMENT_TRIES tries in all. Equal requests placed at once
 * start on different devices:
 * the instance's uuid (with the try's number) spreads the ties (domain/scheduling/spread.ts).
 * No host: CONFLICT with the explanation's short form in `details.explanation`.
 */
export async function placeArqs(
  app: Application,
  store: ReadStore,
  ctx: CommandContext,
  spec: RequestSpec,
  target: { instanceUuid: string; limits: PlacementLimits; allocate: boolean; catchUp?: () => Promise<void> },
): Promise<{ arqs: ArqView[]; hostname: string; alternatives: number[] }> {
  const stale = (h: string) => app.agentUnavailable(h) !== null;
  const request = await placementRequest(store, spec);
  let lastErr: unknown = null;
  for (let attempt = 0; attempt < MAX_PLACEMENT_TRIES; attempt++) {
    // After a lost race, the read models first show the log up to now (the bind that won, and others).
    if (attempt > 0) await target.catchUp?.();
    const index = await placementCandidates(store, target.limits.hosts);
    const spread = attempt === 0 ? target.instanceUuid : `${target.instanceUuid}/${attempt}`;
    const decision = place(request, index, { ...target.limits, stale, spread }, 1);
    if (!decision.ok) throw lastErr ?? refusal(decision.explanation);
    const choice = decision.choices[0]!;
    const providers = choice.assignments.map((a) => ({ hostname: choice.hostname, deviceRpUuid: a.rpUuid }));
    try {
      const arqs = await app.createAndBindArqs(ctx, spec, { instanceUuid: target.instanceUuid, providers }, { allocate: target.allocate, takenRefuses: true });
      return { arqs, hostname: choice.hostname, alternatives: choice.assignments.map((a) => a.alternative) };
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== "CONFLICT" || !String(err.field ?? "").endsWith("deviceRpUuid")) throw err;
      lastErr = err;
    }
  }
  throw lastErr;
}

function refusal(e: Explanation): DomainError {
  const s = shortExplanation(e);
  const why = s.closest ? `; the closest, ${s.closest.hostname}: ${s.closest.message} (needs ${s.closest.change})` : "";
  const counts = s.byRule.map((r) => `${r.hosts} ${r.rule}`).join(", ");
  return new DomainError("CONFLICT", `No host can take the request: of ${s.hosts} host(s), ${counts || "none considered"}${why}`, "deviceProfileName", { reason: "NO_PLACEMENT", explanation: s });
}
