/**
 * Binding. The mutation (startBinds) and the binder (allocateForArq) plan with the same
 * decideBind (bind-plan.ts) and append the same way (bind-run.ts).
 */
import { validateBindings } from "../../domain/arqs/bind.js";
import { liveArq } from "../../domain/arqs/decider.js";
import type { ArqView } from "../../domain/arqs/view.js";
import type { CommandContext } from "../../domain/shared/types.js";
import { aggregates, type Streams } from "../streams.js";
import { planBinds } from "./bind-plan.js";
import { appendPlan, Written } from "./bind-run.js";
import { loadVisible } from "./shared.js";

export type AllocateResult = { ok: true; arq: ArqView } | { ok: false; reason: string };

/**
 * Records each instance's ARQs (an instance is bound once) and starts each ARQ's bind; with
 * `allocate`, binds at once those whose handle is free. A refusal undoes what this call did.
 */
export async function startBinds(s: Streams, ctx: CommandContext, raw: unknown, opts: { allocate?: boolean } = {}): Promise<ArqView[]> {
  const bindings = validateBindings(raw);
  await loadVisible(s, ctx, bindings.map((b) => b.arqUuid), (i) => `bindings[${i}].arqUuid`);
  const written = new Written();
  try {
    const plan = await appendPlan(s, ctx, written, () => planBinds(s, ctx, bindings, { allocate: opts.allocate ?? false, recordInstances: true }));
    return bindings.map((b) => plan!.arq(b.arqUuid).view!);
  } catch (err) {
    await written.undo(s, ctx);
    throw err;
  }
}

/**
 * The binder's step for one ARQ in BIND_STARTED: allocate a handle on the host and record BOUND,
 * appended together; a refused allocation records BIND_FAILED with the reason. If the ARQ moved
 * on meanwhile (unbound, deleted, failed), a handle allocated for it is released.
 */
export async function allocateForArq(s: Streams, ctx: CommandContext, arqUuid: string): Promise<AllocateResult> {
  const written = new Written();
  let notBinding = "";
  const plan = await appendPlan(s, ctx, written, async () => {
    const arq = liveArq((await s.load(aggregates.arq, arqUuid)).state);
    if (arq?.state !== "BIND_STARTED") {
      notBinding = `not binding (${arq ? `state ${arq.state}` : "no such ARQ"})`;
      return undefined;
    }
    const target = { arqUuid, hostname: arq.hostname!, deviceRpUuid: arq.deviceRpUuid!, instanceUuid: arq.instanceUuid! };
    return planBinds(s, ctx, [target], { allocate: true, recordInstances: false });
  });
  if (!plan) {
    await written.undo(s, ctx);
    return { ok: false, reason: notBinding };
  }
  const view = plan.arq(arqUuid).view!;
  return view.state === "BOUND" ? { ok: true, arq: view } : { ok: false, reason: view.bindFailureReason ?? `not bound (state ${view.state})` };
}
