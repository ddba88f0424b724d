/**
 * A bind, decided in one place for the mutation and the binder alike. It has two steps: it starts
 * (the ARQ records its target: BIND_STARTED) and it completes (a free attach handle of the target's
 * resource provider is allocated on the host's stream, and the ARQ records it: BOUND).
 *
 * decideBind takes a bind as far as it can go now:
 * - a bindable ARQ (INITIAL, UNBOUND) starts; given the host's state, it also completes when the
 *   host can allocate. When the host refuses (unknown RP, no free handle, maintenance), it stays
 *   started: the binder, which owns completion, timeouts and recovery, fails it with the reason.
 *   A target that does not fit the ARQ's request group (resource class, required and forbidden
 *   traits: inventory/target-fit.ts) is refused at once with a typed error, and nothing is started.
 * - an ARQ in BIND_STARTED to this target completes, or fails with the host's reason (a target
 *   that does not fit its group included).
 * - an ARQ BOUND to this target, or BIND_STARTED with no host given: nothing (a retry).
 * - anything else is the ARQ decider's refusal (not found, bad state, another target).
 * A handle the host already allocated to this ARQ for this target is reused, never allocated twice,
 * while the bind is under way (BIND_STARTED); a bind that starts now releases a handle left from an
 * earlier binding and allocates afresh (inventory/allocation.ts: `afresh`).
 *
 * A group that asks for a bitstream (`need`: accel:bitstream_id or accel:function_id, with the
 * catalogue's answer) completes only on a region that runs it (inventory/programming.ts); otherwise
 * the bind holds its handle and requests (or joins) the region's programming, and stays
 * BIND_STARTED until the binder sees the outcome. A region refused for programming is refused
 * like a host that cannot allocate; a bind whose programming failed fails with that reason.
 */
import { decideAllocate } from "../inventory/allocation.js";
import type { InventoryEvent } from "../inventory/events.js";
import { regionForBind, type BitstreamNeed } from "../inventory/programming.js";
import { evolveHost, findDeployable, type HostState } from "../inventory/state.js";
import { alternativeMet, isTargetMismatch, requirementsOf } from "../inventory/target-fit.js";
import { fold } from "../shared/decider.js";
import { isUuid } from "../shared/json.js";
import { tolerationsOf } from "../shared/tolerations.js";
import { DomainError } from "../shared/types.js";
import type { ArqStreamState } from "./arq.js";
import { checkBindField, decideArq, evolveArq, liveArq, type BindTarget } from "./decider.js";
import type { ArqEvent } from "./events.js";

export interface ArqBinding extends BindTarget {
  arqUuid: string;
}

export interface BindDecision {
  /** For stream arq-<uuid>. */
  arq: ArqEvent[];
  /** For stream host-<hostname>: the allocation, if the bind completes with a new one. */
  host: InventoryEvent[];
  /** The states after these events (folded here once, for the caller to carry on from). */
  arqAfter: ArqStreamState;
  hostAfter: HostState | null;
}

const ARQ = { evolve: evolveArq };
const HOST = { evolve: evolveHost };

/** What a bind of a group asking for a bitstream brings: the need, and an id for a request it may make. */
export interface BindProgramming {
  need: BitstreamNeed | null;
  requestId: string;
  /** Why the host's agent cannot program now (stale or gone): a bind that needs programming fails at once. */
  agentDown?: string | null;
}

/**
 * `host`: the state of host-<target.hostname>, or null to decide only the start. `projectId`: the
 * caller's, for an ARQ that has none. `allocatedByThisBind`: the host's allocation for the ARQ was
 * made by an earlier attempt of this same bind (its ARQ step was refused), so it is reused even
 * though the bind starts now. `takenRefuses`: a provider whose handles are all held refuses a bind
 * that starts now (CONFLICT on deviceRpUuid) rather than leaving it for the binder to fail: the
 * placement engine's caller then tries its next choice. `programming`: for a group that asks for a bitstream.
 */
export function decideBind(
  arq: ArqStreamState,
  host: HostState | null,
  target: ArqBinding & { projectId?: string | null; allocatedByThisBind?: boolean; takenRefuses?: boolean },
  at: string,
  programming: BindProgramming | null = null,
): BindDecision {
  const { arqUuid, hostname, deviceRpUuid, instanceUuid, allocatedByThisBind = false } = target;
  const started = decideArq({ type: "StartArqBind", data: { arqUuid, hostname, deviceRpUuid, instanceUuid, projectId: target.projectId, at } }, arq);
  const arqStarted = fold(ARQ, arq, started);
  const decision = (events: ArqEvent[], hostEvents: InventoryEvent[] = [], hostAfter = host): BindDecision => ({
    arq: [...started, ...events],
    host: hostEvents,
    arqAfter: fold(ARQ, arqStarted, events),
    hostAfter,
  });
  // Refused now: the mutation only starts the bind, the binder fails it with the reason.
  const refuse = (reason: string) => (started.length > 0 ? decision([]) : decision(decideArq({ type: "FailArqBind", data: { arqUuid, reason, at } }, arqStarted)));
  if (host === null || liveArq(arqStarted)?.state !== "BIND_STARTED") return decision([]);
  // A bind that starts now owns no earlier failure: a leftover is released or replaced below.
  const failure = host.programmingFailures.get(arqUuid);
  if (failure !== undefined && (started.length === 0 || allocatedByThisBind)) return refuse(failure);
  let allocated: InventoryEvent[];
  const requirements = requirementsOf(liveArq(arqStarted)!.group);
  try {
    const group = liveArq(arqStarted)!.group;
    const tolerations = tolerationsOf(group);
    const cleanAfterUse = group["accel:clean_after_use"] === "true";
    // A bind that starts now owns no allocation yet: one the host holds for the ARQ is a leftover.
    allocated = decideAllocate(host, { hostname, rpUuid: deviceRpUuid, arqUuid, instanceUuid, at, requirements, tolerations, cleanAfterUse, afresh: started.length > 0 && !allocatedByThisBind });
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // A provider that does not fit the group never will: the caller who names it is refused at once.
    const taken = target.takenRefuses === true && err.code === "CONFLICT" && err.field === "deviceRpUuid";
    if ((taken || isTargetMismatch(err)) && started.length > 0) throw err;
    return refuse(err.message);
  }
  const hostAllocated = allocated.length > 0 ? fold(HOST, host, allocated) : host;
  const a = hostAllocated.allocations.get(arqUuid);
  // No handle yet: its partition is being made (inventory/partition-allocation.ts); the agent's answer runs the bind again.
  if (!a) return decision([], allocated, hostAllocated);
  const requestedBy = { kind: "bind" as const, arqUuid, instanceUuid };
  const verdict = regionForBind(hostAllocated, a.deployableUuid, arqUuid, programming?.need ?? null, { requestId: programming?.requestId ?? "", requestedBy, at });
  switch (verdict.kind) {
    case "refuse":
      return refuse(verdict.reason);
    case "wait":
      if (programming?.agentDown) return refuse(programming.agentDown);
      return decision([], [...allocated, ...verdict.events], fold(HOST, hostAllocated, verdict.events));
    case "complete": {
      const deployable = findDeployable(hostAllocated, a.deployableUuid)?.deployable;
      const alternative = deployable ? alternativeMet(deployable, requirements) : null;
      const bound = decideArq(
        {
          type: "CompleteArqBind",
          data: {
            arqUuid,
            hostname,
            deviceRpUuid,
            instanceUuid,
            deployableUuid: a.deployableUuid,
            handleUuid: a.handleUuid,
            handleType: a.handleType,
            handleInfo: a.info,
            ...(alternative === null ? {} : { alternative }),
            at,
          },
        },
        arqStarted,
      );
      return decision(bound, allocated, hostAllocated);
    }
  }
}

/**
 * The bindings of one call, checked before anything is loaded: every field present, no ARQ twice.
 * Errors name the binding (`bindings[1].hostname`).
 */
export function validateBindings(bindings: unknown): ArqBinding[] {
  if (!Array.isArray(bindings)) throw new DomainError("BAD_USER_INPUT", "bindings must be a list", "bindings");
  const seen = new Set<string>();
  return bindings.map((b: Partial<Record<keyof ArqBinding, unknown>> | null, i) => {
    const field = (f: keyof ArqBinding) => checkBindField(f, b?.[f], `bindings[${i}].${f}`);
    const binding = { arqUuid: field("arqUuid"), hostname: field("hostname"), deviceRpUuid: field("deviceRpUuid"), instanceUuid: field("instanceUuid") };
    // Resource providers are Placement's: uuid3 of the deployable's name, as Cyborg names them.
    if (!isUuid(binding.deviceRpUuid)) throw new DomainError("BAD_USER_INPUT", `deviceRpUuid must be a resource provider's uuid, got ${JSON.stringify(binding.deviceRpUuid)}`, `bindings[${i}].deviceRpUuid`);
    if (seen.has(binding.arqUuid)) throw new DomainError("BAD_USER_INPUT", `ARQ ${binding.arqUuid} appears twice`, `bindings[${i}].arqUuid`);
    seen.add(binding.arqUuid);
    return binding;
  });
}

/** Where a creation's ARQs go (createAndBind): one instance, and a provider per request group or one for all. */
export interface PlugTarget {
  instanceUuid: string;
  providers: Array<{ hostname: string; deviceRpUuid: string }>;
}

/** Checks a plug's target before anything is written. Errors name the provider (`providers[1].hostname`). */
export function validatePlugTarget(instanceUuid: unknown, providers: unknown): PlugTarget {
  const instance = checkBindField("instanceUuid", instanceUuid);
  if (!Array.isArray(providers) || providers.length === 0) {
    throw new DomainError("BAD_USER_INPUT", "give the resource provider the scheduler chose: one per request group, or one for all", "providers");
  }
  return {
    instanceUuid: instance,
    providers: providers.map((p: { hostname?: unknown; deviceRpUuid?: unknown } | null, i) => {
      const hostname = checkBindField("hostname", p?.hostname, `providers[${i}].hostname`);
      const deviceRpUuid = checkBindField("deviceRpUuid", p?.deviceRpUuid, `providers[${i}].deviceRpUuid`);
      if (!isUuid(deviceRpUuid)) throw new DomainError("BAD_USER_INPUT", `deviceRpUuid must be a resource provider's uuid, got ${JSON.stringify(deviceRpUuid)}`, `providers[${i}].deviceRpUuid`);
      return { hostname, deviceRpUuid };
    }),
  };
}

/** Refuses providers that do not cover the request's groups: one for all, or one per group. */
export function checkProvidersCover(target: PlugTarget, groups: number): void {
  const n = target.providers.length;
  if (n !== 1 && n !== groups) {
    throw new DomainError("BAD_USER_INPUT", `${n} providers given for a request of ${groups} group(s): give one per group (in group order), or one for all`, "providers");
  }
}

/** The bindings of ARQs just created: each to its group's provider (or the only one). */
export function plugBindings(arqs: ReadonlyArray<{ uuid: string; deviceProfileGroupId: number }>, target: PlugTarget): ArqBinding[] {
  return arqs.map((a) => ({ arqUuid: a.uuid, instanceUuid: target.instanceUuid, ...(target.providers[a.deviceProfileGroupId] ?? target.providers[0]!) }));
}
