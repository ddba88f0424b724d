/**
 * One bind call's decisions, made with the domain's decideBind: each instance's record of its
 * ARQs, each host's allocations (its state carried from one ARQ to the next), each ARQ's bind.
 * Steps are appended in that order, so an ARQ's step is appended only if what it depends on was.
 */
import { randomUUID } from "node:crypto";
import { decideBind, type ArqBinding, type BindProgramming } from "../../domain/arqs/bind.js";
import type { ArqStreamState } from "../../domain/arqs/arq.js";
import { liveArq } from "../../domain/arqs/decider.js";
import type { ArqEvent } from "../../domain/arqs/events.js";
import { arqView, type ArqView } from "../../domain/arqs/view.js";
import { isStaleFor, type InstanceState } from "../../domain/instances/decider.js";
import type { InstanceEvent } from "../../domain/instances/events.js";
import type { InventoryEvent } from "../../domain/inventory/events.js";
import type { HostState } from "../../domain/inventory/state.js";
import { fold } from "../../domain/shared/decider.js";
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import type { DomainEventShape, Loaded } from "../handle.js";
import { aggregates, Decided, type Streams } from "../streams.js";
import { asksForBitstream, type NeedResolver } from "./bitstream-need.js";

export class BindPlan {
  readonly instanceSteps: Array<Decided<InstanceState, InstanceEvent>> = [];
  readonly hostSteps: Array<Decided<HostState, InventoryEvent>> = [];
  readonly arqSteps: Array<Decided<ArqStreamState, ArqEvent>> = [];
  /** Every ARQ of the call as loaded for this plan. */
  readonly arqs = new Map<string, Loaded<ArqStreamState>>();

  get steps(): Array<Decided<unknown, DomainEventShape>> {
    return [...this.instanceSteps, ...this.hostSteps, ...this.arqSteps];
  }

  /** The ARQ after the plan was appended (or as loaded, when it had nothing to append); null if it is gone. */
  view(arqUuid: string): ArqView | null {
    const now = this.arqSteps.find((st) => st.id === arqUuid)?.result ?? this.arqs.get(arqUuid)!;
    const live = liveArq(now.state);
    return live && arqView(live, now.revision, now.position!);
  }
}

export interface PlanOptions {
  /** Decide the allocations now (the binder, and the mutation's fast path); without, binds only start. */
  allocate: boolean;
  /** Record each instance's ARQs (the mutation; the binder finishes binds already recorded). */
  recordInstances: boolean;
  /** Looks up the bitstream a group asks for (a new resolver per call: it remembers lookups). */
  bitstreams?: NeedResolver;
  /**
   * The binder: a catalogue that cannot answer fails the plan (the binder retries). The mutation
   * then only starts the binds that asked it, and the binder finishes them.
   */
  catalogueErrorsFail?: boolean;
  /** Why a host's agent cannot program now, or null (ReportTimes): such a bind fails instead of waiting. */
  agentDown?: (hostname: string) => string | null;
  /** A bind that starts on a provider whose handles are all held is refused (CONFLICT) instead of waiting for the binder to fail it (decideBind). */
  takenRefuses?: boolean;
  /** ARQs whose handle an earlier attempt of this call allocated (reused; any other allocation of an ARQ that starts now is a leftover). */
  allocatedBefore?: ReadonlySet<string>;
  /** Decided on the host's state before the binds, and appended with them: the agent's answer a waiting bind completes on (app/partitions.ts). */
  hostFirst?: { hostname: string; decide(state: HostState): InventoryEvent[] };
  /** Per ARQ, what its step answers when that is not this call's request (the bind it completes: bind-cause.ts). */
  arqCtx?: ReadonlyMap<string, NonNullable<Decided<unknown, never>["options"]["ctx"]>>;
}

export async function planBinds(s: Streams, ctx: CommandContext, bindings: readonly ArqBinding[], opts: PlanOptions): Promise<BindPlan> {
  const plan = new BindPlan();
  const hostnames = opts.allocate ? [...new Set(bindings.map((b) => b.hostname))] : [];
  const [instances, arqs, hosts] = await Promise.all([
    opts.recordInstances ? Promise.all([...byInstance(bindings)].map(([id, arqUuids]) => loadInstance(s, id, arqUuids))) : [],
    Promise.all(bindings.map((b) => s.load(aggregates.arq, b.arqUuid))),
    Promise.all(hostnames.map((h) => s.load(aggregates.host, h))),
  ]);
  for (const { instanceUuid, arqUuids, stale, loaded } of instances) {
    const events = aggregates.instance.decider.decide({ type: "BindInstanceArqs", data: { instanceUuid, arqUuids, stale, at: ctx.at } }, loaded.state);
    if (events.length > 0) plan.instanceSteps.push(new Decided(aggregates.instance, instanceUuid, loaded, events));
  }
  const carried = new Map(hostnames.map((h, i) => [h, { loaded: hosts[i]!, state: hosts[i]!.state, events: [] as InventoryEvent[] }]));
  const first = opts.hostFirst && carried.get(opts.hostFirst.hostname);
  if (first) {
    first.events.push(...opts.hostFirst!.decide(first.state));
    first.state = fold(aggregates.host.decider, first.state, first.events);
  }
  const programming = await Promise.all(bindings.map((b, i) => bitstreamFor(b, arqs[i]!.state, carried.get(b.hostname)?.state, opts)));
  bindings.forEach((b, i) => {
    const loaded = arqs[i]!;
    plan.arqs.set(b.arqUuid, loaded);
    const p = programming[i]!;
    const host = p === "start only" ? undefined : carried.get(b.hostname);
    const d = naming(i, () => decideBind(loaded.state, host?.state ?? null, { ...b, projectId: ctx.projectId ?? null, allocatedByThisBind: opts.allocatedBefore?.has(b.arqUuid), takenRefuses: opts.takenRefuses }, ctx.at, p === "start only" ? null : p));
    if (host && d.host.length > 0) {
      host.events.push(...d.host);
      host.state = d.hostAfter!;
    }
    const stepCtx = opts.arqCtx?.get(b.arqUuid);
    if (d.arq.length > 0) plan.arqSteps.push(new Decided(aggregates.arq, b.arqUuid, loaded, d.arq, { after: d.arqAfter, ...(stepCtx ? { ctx: stepCtx } : {}) }));
  });
  for (const [hostname, h] of carried) {
    if (h.events.length > 0) plan.hostSteps.push(new Decided(aggregates.host, hostname, h.loaded, h.events, { after: h.state }));
  }
  return plan;
}

/** A group that asks for a bitstream: the need and a request id; "start only" when the catalogue did not answer. */
async function bitstreamFor(b: ArqBinding, arq: ArqStreamState, host: HostState | undefined, opts: PlanOptions): Promise<BindProgramming | null | "start only"> {
  const group = liveArq(arq)?.group;
  if (!host || !group || !opts.bitstreams || !asksForBitstream(group)) return null;
  try {
    const need = await opts.bitstreams(group, host, b.deviceRpUuid);
    return { need, requestId: randomUUID(), agentDown: opts.agentDown?.(b.hostname) ?? null };
  } catch (err) {
    if (opts.catalogueErrorsFail) throw err;
    return "start only";
  }
}

function byInstance(bindings: readonly ArqBinding[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const b of bindings) out.set(b.instanceUuid, [...(out.get(b.instanceUuid) ?? []), b.arqUuid]);
  return out;
}

/** The instance, and which of the other ARQs it lists are stale (their streams are read only when it lists others). */
async function loadInstance(s: Streams, instanceUuid: string, arqUuids: string[]) {
  const loaded = await s.load(aggregates.instance, instanceUuid);
  const others = loaded.state.arqUuids.filter((id) => !arqUuids.includes(id));
  const states = await Promise.all(others.map((id) => s.load(aggregates.arq, id)));
  const stale = others.filter((_, i) => isStaleFor(instanceUuid, states[i]!.state));
  return { instanceUuid, arqUuids, stale, loaded };
}

/** A refusal of binding i names it: `bindings[i].arqUuid`. */
function naming<T>(i: number, decide: () => T): T {
  try {
    return decide();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    throw new DomainError(err.code, err.message, `bindings[${i}].${err.field ?? "arqUuid"}`, err.details);
  }
}
