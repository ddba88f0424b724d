/**
 * Appending a bind call's plan. A step refused by a concurrent change is decided again from the
 * new state: every bind decision is idempotent for its target (an ARQ already started or bound to
 * it decides nothing; a handle the host already allocated to it is reused), so what an earlier
 * attempt appended is never done twice. A refusal by the domain undoes what the call appended.
 */
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import { conflictBackoff, MAX_ATTEMPTS } from "../handle.js";
import { releaseHandleForArq } from "../inventory.js";
import { aggregates, type Streams } from "../streams.js";
import type { BindPlan } from "./bind-plan.js";

/** Plans and appends until no step is refused; undefined when `plan` finds nothing to do. */
export async function appendPlan(s: Streams, ctx: CommandContext, written: Written, plan: () => Promise<BindPlan | undefined>): Promise<BindPlan | undefined> {
  for (let attempt = 1; ; attempt++) {
    const p = await plan();
    if (!p) return undefined;
    const { refusal } = await s.appendSequence(p.steps, ctx);
    written.note(p);
    if (!refusal) return p;
    if (attempt >= MAX_ATTEMPTS) throw new DomainError("CONFLICT", `binding: gave up after ${attempt} concurrent updates; try again`);
    await conflictBackoff(attempt);
  }
}

/** What one bind call appended, so that a refusal can take it back (Cyborg leaves partial binds dirty, reference 8.5). */
export class Written {
  /** ARQ -> hostname, for ARQs whose bind this call started. */
  private readonly started = new Map<string, string>();
  /** ARQ -> hostname, for handles this call allocated. */
  private readonly allocated = new Map<string, string>();
  /** Instance -> the ARQs this call recorded on it. */
  private readonly recorded = new Map<string, string[]>();

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

  /** Unbinds the ARQs the call started, releases the handles it allocated, and its instances' records. Each step is idempotent. */
  async undo(s: Streams, ctx: CommandContext): Promise<void> {
    for (const arqUuid of this.started.keys()) {
      await s.handle(aggregates.arq, arqUuid, { type: "UnbindArq", data: { arqUuid, at: ctx.at } }, ctx).catch(() => undefined);
    }
    for (const [arqUuid, hostname] of new Map([...this.started, ...this.allocated])) {
      await releaseHandleForArq(s, ctx, hostname, arqUuid).catch(() => undefined);
    }
    for (const [instanceUuid, arqUuids] of this.recorded) {
      await s.handle(aggregates.instance, instanceUuid, { type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids, at: ctx.at } }, ctx).catch(() => undefined);
    }
  }
}
