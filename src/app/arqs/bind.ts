/**
 * Binding: startBinds records the instance's ARQs and starts each ARQ's bind (with `allocate`, it
 * also binds at once the ARQs whose handle it can allocate); the binder calls allocateForArq for
 * the others (or failBind on a timeout). Decisions are appended with expected revisions, together
 * where one depends on another (bind-sequence.ts), and a refusal undoes what the call did (Cyborg
 * leaves partial binds dirty, reference 8.5).
 */
import type { ArqStreamState } from "../../domain/arqs/decider.js";
import { DomainError, type ArqState, type CommandContext } from "../../domain/shared/types.js";
import { releaseHandleForArq } from "../inventory.js";
import { conflictBackoff, MAX_ATTEMPTS, type Loaded } from "../handle.js";
import { aggregates, decided, type DecidedStep, type Streams } from "../streams.js";
import { toArqView, type ArqView } from "../views.js";
import { startInOneSequence } from "./bind-sequence.js";
import { completeBind, liveArq, loadVisible } from "./shared.js";

export interface ArqBinding {
  arqUuid: string;
  hostname: string;
  deviceRpUuid: string;
  instanceUuid: string;
}

export type AllocateResult = { ok: true; arq: ArqView } | { ok: false; reason: string };

const BINDABLE: readonly ArqState[] = ["INITIAL", "UNBOUND"];
const BINDING: readonly ArqState[] = ["BIND_STARTED", "BOUND"];

/**
 * Validates every binding, records each instance's ARQs on its instance stream (an instance is
 * bound once), then starts each ARQ's bind; with `allocate`, binds at once those whose handle is
 * free. A refusal undoes what this call did.
 */
export async function startBinds(s: Streams, ctx: CommandContext, bindings: ArqBinding[], opts: { allocate?: boolean } = {}): Promise<ArqView[]> {
  if (!Array.isArray(bindings)) throw new DomainError("BAD_USER_INPUT", "bindings must be a list", "bindings");
  const seen = new Set<string>();
  bindings.forEach((b, i) => {
    for (const f of ["arqUuid", "hostname", "deviceRpUuid", "instanceUuid"] as const) {
      const v: unknown = b?.[f];
      if (typeof v !== "string" || v.trim().length === 0 || v.length > 255) {
        throw new DomainError("BAD_USER_INPUT", `Fields absent in patch: ${f} is required to bind`, `bindings[${i}].${f}`);
      }
    }
    if (seen.has(b.arqUuid)) throw new DomainError("BAD_USER_INPUT", `ARQ ${b.arqUuid} appears twice`, `bindings[${i}].arqUuid`);
    seen.add(b.arqUuid);
  });
  const loaded = await loadVisible(s, ctx, bindings.map((b) => b.arqUuid), (i) => `bindings[${i}].arqUuid`);
  const views = new Map<string, ArqView>();
  const toStart: ArqBinding[] = [];
  loaded.forEach(({ arq, revision }, i) => {
    const b = bindings[i]!;
    const retry = BINDING.includes(arq.state) && arq.hostname === b.hostname && arq.deviceRpUuid === b.deviceRpUuid && arq.instanceUuid === b.instanceUuid;
    if (retry) views.set(arq.uuid, toArqView(arq, revision));
    else if (BINDABLE.includes(arq.state)) toStart.push(b);
    else {
      throw new DomainError("CONFLICT", `Bad state: ${arq.state} for ARQ: ${arq.uuid}. Expected state(s): ${BINDABLE.join(", ")}`, `bindings[${i}].arqUuid`);
    }
  });

  const byInstance = new Map<string, string[]>();
  for (const b of bindings) byInstance.set(b.instanceUuid, [...(byInstance.get(b.instanceUuid) ?? []), b.arqUuid]);
  const recorded: Array<{ instanceUuid: string; arqUuids: string[] }> = [];
  const started: ArqBinding[] = [];
  try {
    // Usually everything goes in one sequence; what it did not append goes step by step below.
    const fast = await startInOneSequence(s, ctx, byInstance, toStart, { allocate: opts.allocate ?? false });
    recorded.push(...fast.recorded);
    for (const { binding, view } of fast.started) {
      started.push(binding);
      views.set(binding.arqUuid, view);
    }
    for (const [instanceUuid, arqUuids] of byInstance) {
      if (fast.instancesDone.has(instanceUuid)) continue;
      if (await bindInstance(s, ctx, instanceUuid, arqUuids)) recorded.push({ instanceUuid, arqUuids });
    }
    for (const b of toStart) {
      if (views.has(b.arqUuid)) continue;
      const r = await s.handle(aggregates.arq, b.arqUuid, { type: "StartArqBind", data: { ...b, projectId: ctx.projectId ?? null, at: ctx.at } }, ctx);
      started.push(b);
      views.set(b.arqUuid, toArqView(liveArq(r.state)!, r.revision));
    }
  } catch (err) {
    for (const b of started) {
      await s.handle(aggregates.arq, b.arqUuid, { type: "UnbindArq", data: { arqUuid: b.arqUuid, at: ctx.at } }, ctx).catch(() => undefined);
      await releaseHandleForArq(s, ctx, b.hostname, b.arqUuid).catch(() => undefined);
    }
    for (const r of recorded) {
      await s.handle(aggregates.instance, r.instanceUuid, { type: "ReleaseInstanceArqs", data: { ...r, at: ctx.at } }, ctx).catch(() => undefined);
    }
    throw err;
  }
  return bindings.map((b) => views.get(b.arqUuid)!);
}

/**
 * Records the instance's ARQs; true when this call recorded them (false for a retry). On a
 * refusal, listed ARQs that are deleted or now bound to another instance are released (what a
 * crashed unbind or delete left behind) and the bind is tried once more.
 */
async function bindInstance(s: Streams, ctx: CommandContext, instanceUuid: string, arqUuids: string[]): Promise<boolean> {
  const bind = () => s.handle(aggregates.instance, instanceUuid, { type: "BindInstanceArqs", data: { instanceUuid, arqUuids, at: ctx.at } }, ctx);
  try {
    return (await bind()).events.length > 0;
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== "CONFLICT") throw err;
    const { state } = await s.load(aggregates.instance, instanceUuid);
    const listed = state.arqUuids.filter((id) => !arqUuids.includes(id));
    const arqs = await Promise.all(listed.map((id) => s.load(aggregates.arq, id)));
    const stale = listed.filter((_, i) => {
      const arq = liveArq(arqs[i]!.state);
      return !arq || (arq.instanceUuid !== null && arq.instanceUuid !== instanceUuid);
    });
    if (stale.length === 0) throw err;
    await s.handle(aggregates.instance, instanceUuid, { type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids: stale, at: ctx.at } }, ctx);
    return (await bind()).events.length > 0;
  }
}

/**
 * The binder's step for one ARQ in BIND_STARTED: allocate a handle on the host stream and record
 * ArqBound, decided together and appended as one sequence (one commit on lmdb): ArqBound is
 * appended only if the allocation was. A refused allocation records ArqBindFailed with the
 * reason. If the ARQ changed meanwhile (unbound, deleted, failed), the allocation made for it is
 * released and the ARQ looked at again.
 */
export async function allocateForArq(s: Streams, ctx: CommandContext, arqUuid: string): Promise<AllocateResult> {
  for (let attempt = 1; ; attempt++) {
    const arqLoaded = await s.load(aggregates.arq, arqUuid);
    const arq = liveArq(arqLoaded.state);
    if (!arq || arq.state !== "BIND_STARTED") return { ok: false, reason: `not binding (${arq ? `state ${arq.state}` : "no such ARQ"})` };
    const hostname = arq.hostname!;
    const target = { hostname, deviceRpUuid: arq.deviceRpUuid!, instanceUuid: arq.instanceUuid! };
    const hostLoaded = await s.load(aggregates.host, hostname);
    let hostEvents;
    try {
      hostEvents = aggregates.host.decider.decide(
        { type: "AllocateAttachHandle", data: { hostname, rpUuid: target.deviceRpUuid, arqUuid, instanceUuid: target.instanceUuid, at: ctx.at } },
        hostLoaded.state,
      );
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      await s.handle(aggregates.arq, arqUuid, { type: "FailArqBind", data: { arqUuid, reason: err.message, onlyFrom: ["BIND_STARTED"], at: ctx.at } }, ctx);
      return { ok: false, reason: err.message };
    }
    const hostAfter = hostEvents.reduce(aggregates.host.decider.evolve, hostLoaded.state);
    const allocation = hostAfter.allocations.get(arqUuid)!;
    let arqEvents;
    try {
      arqEvents = aggregates.arq.decider.decide(completeBind({ arqUuid, ...target }, allocation, ctx.at), arqLoaded.state);
    } catch (err) {
      // Nothing is allocated yet: refusing here leaves nothing to undo.
      if (!(err instanceof DomainError)) throw err;
      return { ok: false, reason: err.message };
    }
    // An allocation already on the host (a binder that stopped between the two) needs no step.
    const steps: DecidedStep[] = [];
    if (hostEvents.length > 0) steps.push({ ...decided(aggregates.host, hostname, hostLoaded, hostEvents), after: hostAfter });
    steps.push(decided(aggregates.arq, arqUuid, arqLoaded, arqEvents));
    const r = await s.appendSequence(steps, ctx);
    if (!r.refusal) {
      const bound = r.appended.at(-1)! as Loaded<ArqStreamState>;
      return { ok: true, arq: toArqView(liveArq(bound.state)!, bound.revision) };
    }
    // The host moved on (another allocation) or the ARQ did: free what this attempt allocated.
    if (r.appended.length > 0) await releaseHandleForArq(s, ctx, hostname, arqUuid);
    if (attempt >= MAX_ATTEMPTS) throw new DomainError("CONFLICT", `binding ARQ ${arqUuid}: gave up after ${attempt} concurrent updates; try again`);
    await conflictBackoff(attempt);
  }
}

/**
 * BIND_STARTED to BIND_FAILED (a timeout, an agent error); false when the ARQ is not binding.
 * `fromBound` also fails a BOUND ARQ (its device or handle was lost); its handle stays allocated
 * until it is unbound or deleted. A BIND_STARTED ARQ's handle, if the allocation got that far, is
 * released.
 */
export async function failBind(s: Streams, ctx: CommandContext, arqUuid: string, reason: string, opts: { fromBound?: boolean } = {}): Promise<boolean> {
  const onlyFrom: ArqState[] = opts.fromBound ? ["BIND_STARTED", "BOUND"] : ["BIND_STARTED"];
  const { state } = await s.load(aggregates.arq, arqUuid);
  if (!liveArq(state)) return false;
  const r = await s.handle(aggregates.arq, arqUuid, { type: "FailArqBind", data: { arqUuid, reason, onlyFrom, at: ctx.at } }, ctx);
  if (r.events.length === 0) return false;
  const before = liveArq(r.previousState)!;
  if (before.state === "BIND_STARTED" && before.hostname) await releaseHandleForArq(s, ctx, before.hostname, arqUuid);
  return true;
}
