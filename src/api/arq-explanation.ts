/**
 * Explanations about one ARQ, for GraphQL's `explainPlacement(arqUuid:)` and for a refused bind:
 * the ARQ's group (with its alternatives, tolerations and matches) explained over the fleet as a
 * profile is (docs/scheduling.md), with its project's quota; and, when a bind is refused on the
 * provider it named, the short form of that explanation with the named provider's verdict, in
 * the error's `details.explanation` (GraphQL's extensions, REST's error body).
 */
import { getProfileByName } from "../../projections/device-profiles/queries.js";
import { getArqs } from "../../projections/arqs/queries.js";
import type { ArqView } from "../domain/arqs/view.js";
import { explain, judgeHost, requestOf, shortExplanation, type Explanation, type PlacementRequest, type RuledOut } from "../domain/scheduling/index.js";
import { DomainError } from "../domain/shared/types.js";
import type { ReadStore } from "../infra/readstore/port.js";
import type { Application } from "../app/application.js";
import type { ProjectQuotaView } from "../app/quotas.js";
import { placementCandidates } from "./scheduling.js";

export interface ArqExplanation extends Explanation {
  acceleratorRequest: ArqView;
  /** The ARQ's project's quota: its limits and what its ARQs claim now (null: an ARQ of no project). */
  quota: ProjectQuotaView | null;
}

/** The ARQ's group as the engine reads it; a disabled profile refuses every host (PROFILE_DISABLED). */
async function arqRequest(store: ReadStore, arq: ArqView): Promise<PlacementRequest> {
  const profile = await getProfileByName(store, arq.deviceProfileName);
  return requestOf([arq.group], profile?.enabled ?? true);
}

const agentDown = (app: Application) => (h: string) => app.agentUnavailable(h) !== null;

/** `visible`: whether the caller sees the ARQ's project (an ARQ it cannot see is NOT_FOUND, as everywhere). */
export async function explainArq(app: Application, store: ReadStore, arqUuid: string, visible: (projectId: string | null) => boolean, detail: number): Promise<ArqExplanation> {
  const [arq] = await getArqs(store, [arqUuid]);
  if (!arq || !visible(arq.projectId)) throw new DomainError("NOT_FOUND", `No accelerator request ${arqUuid}`, "arqUuid");
  const [request, index, quota] = await Promise.all([arqRequest(store, arq), placementCandidates(store), arq.projectId === null ? null : app.projectQuota(arq.projectId)]);
  return { ...explain(request, index, { stale: agentDown(app) }, Math.max(0, Math.min(detail, 200))), acceleratorRequest: arq, quota };
}

/** What a binding names: the ARQ and where it should go. */
export interface NamedTarget {
  arqUuid?: unknown;
  hostname?: unknown;
  deviceRpUuid?: unknown;
}

/**
 * Runs a bind; a refusal about the provider a binding named (`bindings[i].deviceRpUuid`) goes on
 * with the explanation's short form added to its details. Should the explanation itself fail, the
 * refusal goes on as it was.
 */
export async function explainingRefusal<T>(app: Application, store: ReadStore, bindings: readonly NamedTarget[], run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const m = err instanceof DomainError ? /^bindings\[(\d+)\]\.deviceRpUuid$/.exec(err.field ?? "") : null;
    const binding = m ? bindings[Number(m[1])] : undefined;
    if (!(err instanceof DomainError) || binding === undefined) throw err;
    const explanation = await bindExplanation(app, store, binding).catch(() => null);
    if (explanation === null) throw err;
    throw new DomainError(err.code, err.message, err.field, { ...err.details, explanation });
  }
}

/** The short form for the ARQ's group over the fleet, and the verdict on the provider the binding named. */
async function bindExplanation(app: Application, store: ReadStore, b: NamedTarget) {
  if (typeof b.arqUuid !== "string" || typeof b.hostname !== "string" || typeof b.deviceRpUuid !== "string") return null;
  const [arq] = await getArqs(store, [b.arqUuid]);
  if (!arq) return null;
  const [request, index] = await Promise.all([arqRequest(store, arq), placementCandidates(store)]);
  const limits = { stale: agentDown(app) };
  const short = shortExplanation(explain(request, index, limits, 1));
  const host = index.byName.get(b.hostname);
  const verdict = host ? judgeHost(host, request, limits) : null;
  const provider = verdict?.groups[0]?.providers.find((p) => p.rpUuid === b.deviceRpUuid);
  const ruledOut: RuledOut | null = !verdict
    ? { rule: "RESOURCE_CLASS", message: `${b.hostname} has no accelerator providers the service knows of`, change: "a host whose agent reports the device" }
    : !provider
      ? { rule: "RESOURCE_CLASS", message: `${b.deviceRpUuid} is not a provider of ${b.hostname}`, change: "one of the host's providers" }
      : provider.ruledOut;
  return { ...short, target: { hostname: b.hostname, rpUuid: b.deviceRpUuid, ruledOut: ruledOut ?? verdict?.ruledOut ?? null } };
}
