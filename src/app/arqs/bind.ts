/**
 * Binding. The mutation (startBinds) and the binder (allocateForArq) plan with the same
 * decideBind (bind-plan.ts) and append the same way (append-plan.ts). A refusal by the domain
 * undoes what the call appended.
 */
import { validateBindings } from "../../domain/arqs/bind.js";
import { liveArq } from "../../domain/arqs/decider.js";
import type { ArqView } from "../../domain/arqs/view.js";
import { stream, type CommandContext } from "../../domain/shared/types.js";
import { aggregates, type Streams } from "../streams.js";
import { appendPlan } from "./append-plan.js";
import { bindStepContext } from "./bind-cause.js";
import type { BitstreamCatalogue } from "../../infra/bitstreams/port.js";
import { planBinds, type BindPlan, type PlanOptions } from "./bind-plan.js";
import { needResolver } from "./bitstream-need.js";
import { releaseOrphanedHandle } from "./orphaned-handle.js";
import { loadVisible } from "./shared.js";

/** `waiting`: the bind holds its handle and waits for its region's programming. */
/** `notBinding`: the ARQ was not in BIND_STARTED, so nothing was decided or appended. */
export type AllocateResult = { ok: true; arq: ArqView } | { ok: false; reason: string; waiting?: boolean; notBinding?: boolean };

/**
 * Records each instance's ARQs (an instance is bound once) and starts each ARQ's bind; with
 * `allocate`, binds at once those whose handle is free. A refusal undoes what this call did.
 */
export async function startBinds(
  s: Streams,
  ctx: CommandContext,
  raw: unknown,
  opts: { allocate?: boolean; takenRefuses?: boolean; catalogue?: BitstreamCatalogue; agentDown?: PlanOptions["agentDown"] } = {},
): Promise<ArqView[]> {
  const bindings = validateBindings(raw);
  await loadVisible(s, ctx, bindings.map((b) => b.arqUuid), (i) => `bindings[${i}].arqUuid`);
  const written = new Written();
  const bitstreams = opts.catalogue && needResolver(opts.catalogue);
  try {
    const allocate = opts.allocate ?? false;
    const streams = bindings.flatMap((b) => [stream.arq(b.arqUuid), stream.instance(b.instanceUuid), ...(allocate ? [stream.host(b.hostname)] : [])]);
    const plan = await appendPlan(s, ctx, streams, () => planBinds(s, ctx, bindings, { allocate, takenRefuses: opts.takenRefuses, recordInstances: true, bitstreams, agentDown: opts.agentDown, allocatedBefore: written.allocatedArqs }), (p) => written.note(p));
    return bindings.map((b) => plan!.view(b.arqUuid)!);
  } catch (err) {
    await written.undo(s, ctx);
    throw err;
  }
}

/**
 * The binder's step for one ARQ in BIND_STARTED: allocate a handle on the host and record BOUND,
 * appended together; a refused allocation records BIND_FAILED with the reason. A bind that needs
 * its region programmed holds its handle and waits (`waiting`); one whose programming failed is
 * failed, and its handle released. If the ARQ moved on meanwhile (unbound, deleted, failed), a
 * handle allocated for it is released.
 */
export async function allocateForArq(
  s: Streams,
  ctx: CommandContext,
  arqUuid: string,
  catalogue?: BitstreamCatalogue,
  agentDown?: PlanOptions["agentDown"],
  hostFirst?: PlanOptions["hostFirst"],
): Promise<AllocateResult> {
  return (await allocateForArqs(s, ctx, [arqUuid], catalogue, agentDown, hostFirst)).get(arqUuid)!;
}

/**
 * allocateForArq for several ARQs in one plan: those waiting on one agent's answer (`hostFirst`,
 * appended first with them), such as the binds of a region whose programming just ended. An ARQ
 * not in BIND_STARTED is `notBinding`; when none is, nothing is appended, `hostFirst` included.
 */
export async function allocateForArqs(
  s: Streams,
  ctx: CommandContext,
  arqUuids: readonly string[],
  catalogue?: BitstreamCatalogue,
  agentDown?: PlanOptions["agentDown"],
  hostFirst?: PlanOptions["hostFirst"],
): Promise<Map<string, AllocateResult>> {
  const written = new Written();
  const notBinding = new Map<string, string>();
  const bitstreams = catalogue && needResolver(catalogue);
  // The hosts are known from the ARQs; if an ARQ moves meanwhile, the plan reads it again.
  const loaded = await Promise.all(arqUuids.map(async (id) => liveArq((await s.load(aggregates.arq, id)).state)?.hostname));
  const hostnames = new Set([...loaded.filter((h): h is string => typeof h === "string"), ...(hostFirst ? [hostFirst.hostname] : [])]);
  const streams = [...arqUuids.map((id) => stream.arq(id)), ...[...hostnames].map((h) => stream.host(h))];
  // Completing binds on an agent's answer: their steps answer the binds' requests, as the binder's would.
  const arqCtx = hostFirst ? await bindContexts(s, arqUuids) : undefined;
  const planOnce = async () => {
    notBinding.clear();
    const targets = [];
    for (const arqUuid of arqUuids) {
      const arq = liveArq((await s.load(aggregates.arq, arqUuid)).state);
      if (arq?.state !== "BIND_STARTED") notBinding.set(arqUuid, `not binding (${arq ? `state ${arq.state}` : "no such ARQ"})`);
      else targets.push({ arqUuid, hostname: arq.hostname!, deviceRpUuid: arq.deviceRpUuid!, instanceUuid: arq.instanceUuid! });
    }
    if (targets.length === 0) return undefined;
    return planBinds(s, ctx, targets, { allocate: true, recordInstances: false, bitstreams, catalogueErrorsFail: true, agentDown, hostFirst, arqCtx });
  };
  const plan = await appendPlan(s, ctx, streams, planOnce, (p) => written.note(p));
  const out = new Map<string, AllocateResult>();
  if (!plan) await written.undo(s, ctx);
  for (const arqUuid of arqUuids) {
    const why = notBinding.get(arqUuid);
    out.set(arqUuid, why !== undefined || !plan ? { ok: false, reason: why ?? "not binding", notBinding: true } : await outcome(s, ctx, plan.view(arqUuid)!, arqUuid));
  }
  return out;
}

/** Each ARQ's step context from the event that started its bind (bind-cause.ts). */
async function bindContexts(s: Streams, arqUuids: readonly string[]): Promise<Map<string, ReturnType<typeof bindStepContext>>> {
  const out = new Map<string, ReturnType<typeof bindStepContext>>();
  await Promise.all(
    arqUuids.map(async (id) => {
      const started = (await s.store.readStream(stream.arq(id), { direction: "backwards" })).find((e) => e.type === "ArqBindStarted");
      if (started) out.set(id, bindStepContext(started));
    }),
  );
  return out;
}

async function outcome(s: Streams, ctx: CommandContext, view: ArqView, arqUuid: string): Promise<AllocateResult> {
  if (view.state === "BOUND") return { ok: true, arq: view };
  if (view.state === "BIND_STARTED") return { ok: false, reason: "waiting for the region's programming", waiting: true };
  // A bind failed while holding its handle (its programming failed): the handle goes back.
  if (view.state === "BIND_FAILED" && view.hostname) await releaseOrphanedHandle(s, ctx, view.hostname, arqUuid);
  return { ok: false, reason: view.bindFailureReason ?? `not bound (state ${view.state})` };
}

/** What one bind call appended, so that a refusal can take it back (Cyborg leaves partial binds dirty, reference 8.5). */
class Written {
  /** ARQ -> hostname, for ARQs whose bind this call started. */
  private readonly started = new Map<string, string>();
  /** ARQ -> hostname, for handles this call allocated. */
  private readonly allocated = new Map<string, string>();
  /** Instance -> the ARQs this call recorded on it. */
  private readonly recorded = new Map<string, string[]>();

  /** The ARQs whose handles this call allocated so far. */
  get allocatedArqs(): ReadonlySet<string> {
    return new Set(this.allocated.keys());
  }

  note(plan: BindPlan): void {
    for (const st of plan.instanceSteps) {
      for (const e of st.result ? st.events : []) if (e.type === "InstanceArqsBound") this.recorded.set(e.data.instanceUuid, e.data.arqUuids);
    }
    for (const st of plan.hostSteps) {
      for (const e of st.result ? st.events : []) if (e.type === "AttachHandleAllocated") this.allocated.set(e.data.arqUuid, e.data.hostname);
    }
    for (const st of plan.arqSteps) {
      for (const e of st.result ? st.events : []) if (e.type === "ArqBindStarted") this.started.set(e.data.arqUuid, e.data.hostname);
    }
  }

  /**
   * Unbinds the ARQs the call started, releases the handles it allocated, and its instances' records.
   * Each step is idempotent. A handle is released only if its ARQ does not hold it: another process
   * may have completed the bind with it meanwhile (orphaned-handle.ts).
   */
  async undo(s: Streams, ctx: CommandContext): Promise<void> {
    for (const arqUuid of this.started.keys()) {
      await s.handle(aggregates.arq, arqUuid, { type: "UnbindArq", data: { arqUuid, at: ctx.at } }, ctx).catch(() => undefined);
    }
    for (const [arqUuid, hostname] of new Map([...this.started, ...this.allocated])) {
      await releaseOrphanedHandle(s, ctx, hostname, arqUuid).catch(() => undefined);
    }
    for (const [instanceUuid, arqUuids] of this.recorded) {
      await s.handle(aggregates.instance, instanceUuid, { type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids, at: ctx.at } }, ctx).catch(() => undefined);
    }
  }
}
