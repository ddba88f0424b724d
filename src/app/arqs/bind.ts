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
  opts: { allocate?: boolean; catalogue?: BitstreamCatalogue; agentDown?: PlanOptions["agentDown"] } = {},
): Promise<ArqView[]> {
  const bindings = validateBindings(raw);
  await loadVisible(s, ctx, bindings.map((b) => b.arqUuid), (i) => `bindings[${i}].arqUuid`);
  const written = new Written();
  const bitstreams = opts.catalogue && needResolver(opts.catalogue);
  try {
    const allocate = opts.allocate ?? false;
    const streams = bindings.flatMap((b) => [stream.arq(b.arqUuid), stream.instance(b.instanceUuid), ...(allocate ? [stream.host(b.hostname)] : [])]);
    const plan = await appendPlan(s, ctx, streams, () => planBinds(s, ctx, bindings, { allocate, recordInstances: true, bitstreams, agentDown: opts.agentDown, allocatedBefore: written.allocatedArqs }), (p) => written.note(p));
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
  const written = new Written();
  let notBinding = "";
  const bitstreams = catalogue && needResolver(catalogue);
  // The host is known from the ARQ; if the ARQ moves meanwhile, the plan reads it again.
  const hostname = liveArq((await s.load(aggregates.arq, arqUuid)).state)?.hostname;
  const streams = [stream.arq(arqUuid), ...(hostname ? [stream.host(hostname)] : [])];
  const planOnce = async () => {
    const arq = liveArq((await s.load(aggregates.arq, arqUuid)).state);
    if (arq?.state !== "BIND_STARTED") {
      notBinding = `not binding (${arq ? `state ${arq.state}` : "no such ARQ"})`;
      return undefined;
    }
    const target = { arqUuid, hostname: arq.hostname!, deviceRpUuid: arq.deviceRpUuid!, instanceUuid: arq.instanceUuid! };
    return planBinds(s, ctx, [target], { allocate: true, recordInstances: false, bitstreams, catalogueErrorsFail: true, agentDown, hostFirst });
  };
  const plan = await appendPlan(s, ctx, streams, planOnce, (p) => written.note(p));
  if (!plan) {
    await written.undo(s, ctx);
    return { ok: false, reason: notBinding, notBinding: true };
  }
  const view = plan.view(arqUuid)!;
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
