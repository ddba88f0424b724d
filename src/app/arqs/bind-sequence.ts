/**
 * The one-commit way to start binds: every decision of a bind call made up front and appended as
 * one sequence (EventStore.appendSequence: one transaction on lmdb). Order: the instances' ARQ
 * records, then (with `allocate`) each host's handle allocations, then each ARQ's events, so an
 * ARQ's step is appended only if everything it depends on was.
 *
 * With `allocate`, an ARQ whose handle can be allocated now is started and bound at once
 * (ArqBindStarted, ArqBound); the binder has nothing left to do for it. One that cannot (no free
 * handle, maintenance, unknown RP) is only started, and the binder fails it with the reason as
 * before. Any refused decision, and any step the sequence did not append (a concurrent change),
 * is left to the caller's step-by-step path; a handle allocated for an ARQ whose step was not
 * appended is released first.
 */
import type { ArqStreamState } from "../../domain/arqs/decider.js";
import type { HostState } from "../../domain/inventory/decider.js";
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import type { DomainEventShape, Loaded } from "../handle.js";
import { releaseHandleForArq } from "../inventory.js";
import { aggregates, decided, type DecidedStep, type Streams } from "../streams.js";
import { toArqView, type ArqView } from "../views.js";
import type { ArqBinding } from "./bind.js";
import { completeBind, liveArq } from "./shared.js";

export interface SequenceStart {
  recorded: Array<{ instanceUuid: string; arqUuids: string[] }>;
  started: Array<{ binding: ArqBinding; view: ArqView }>;
  /** Instances whose record needs nothing more (recorded now, or by an earlier call). */
  instancesDone: Set<string>;
}

export async function startInOneSequence(
  s: Streams,
  ctx: CommandContext,
  byInstance: Map<string, string[]>,
  toStart: ArqBinding[],
  opts: { allocate: boolean },
): Promise<SequenceStart> {
  const done: SequenceStart = { recorded: [], started: [], instancesDone: new Set() };
  const steps: DecidedStep[] = [];
  const onAppend: Array<(after: Loaded<unknown>) => void> = [];
  const allocatedBy = new Map<number, string[]>(); // host step index -> ARQs it allocates for
  const stepOfArq = new Map<string, number>();
  try {
    for (const [instanceUuid, arqUuids] of byInstance) {
      const loaded = await s.load(aggregates.instance, instanceUuid);
      const events = aggregates.instance.decider.decide({ type: "BindInstanceArqs", data: { instanceUuid, arqUuids, at: ctx.at } }, loaded.state);
      if (events.length === 0) {
        done.instancesDone.add(instanceUuid); // a retry: recorded by an earlier call
        continue;
      }
      steps.push(decided(aggregates.instance, instanceUuid, loaded, events));
      onAppend.push(() => {
        done.instancesDone.add(instanceUuid);
        done.recorded.push({ instanceUuid, arqUuids });
      });
    }
    const arqSteps: Array<{ step: DecidedStep; binding: ArqBinding }> = [];
    for (const b of toStart) {
      const loaded = await s.load(aggregates.arq, b.arqUuid);
      const events: DomainEventShape[] = aggregates.arq.decider.decide({ type: "StartArqBind", data: { ...b, projectId: ctx.projectId ?? null, at: ctx.at } }, loaded.state);
      arqSteps.push({ step: decided(aggregates.arq, b.arqUuid, loaded, events), binding: b });
    }
    if (opts.allocate) {
      for (const [hostname, group] of groupBy(arqSteps, (a) => a.binding.hostname)) {
        const host = await allocateOnHost(s, ctx, hostname, group);
        if (!host) continue;
        allocatedBy.set(steps.length, host.arqUuids);
        steps.push(host.step);
        onAppend.push(() => undefined);
      }
    }
    for (const { step, binding } of arqSteps) {
      stepOfArq.set(binding.arqUuid, steps.length);
      steps.push(step);
      onAppend.push((after) => done.started.push({ binding, view: toArqView(liveArq(after.state as ArqStreamState)!, after.revision) }));
    }
  } catch (err) {
    if (err instanceof DomainError) return done;
    throw err;
  }
  if (steps.length === 0) return done;
  const r = await s.appendSequence(steps, ctx);
  r.appended.forEach((after, i) => onAppend[i]!(after));
  // Allocated, but the ARQ's own step was not appended: free the handle before the caller retries.
  for (const [hostStep, arqUuids] of allocatedBy) {
    if (hostStep >= r.appended.length) continue;
    for (const arqUuid of arqUuids) {
      if (stepOfArq.get(arqUuid)! >= r.appended.length) await releaseHandleForArq(s, ctx, toStart.find((b) => b.arqUuid === arqUuid)!.hostname, arqUuid);
    }
  }
  return done;
}

/**
 * Allocates a handle for each ARQ of the group that can have one now, and adds ArqBound to that
 * ARQ's step. Returns the host's step, or undefined when nothing could be allocated.
 */
async function allocateOnHost(s: Streams, ctx: CommandContext, hostname: string, group: Array<{ step: DecidedStep; binding: ArqBinding }>) {
  const loaded = await s.load(aggregates.host, hostname);
  let state: HostState = loaded.state;
  const events: DomainEventShape[] = [];
  const arqUuids: string[] = [];
  for (const { step, binding: b } of group) {
    let allocation;
    try {
      const allocated = aggregates.host.decider.decide(
        { type: "AllocateAttachHandle", data: { hostname, rpUuid: b.deviceRpUuid, arqUuid: b.arqUuid, instanceUuid: b.instanceUuid, at: ctx.at } },
        state,
      );
      state = allocated.reduce(aggregates.host.decider.evolve, state);
      allocation = state.allocations.get(b.arqUuid)!;
      events.push(...allocated);
    } catch (err) {
      if (err instanceof DomainError) continue; // the binder fails it, with this reason
      throw err;
    }
    const startedState = step.events.reduce((acc: ArqStreamState, e) => aggregates.arq.decider.evolve(acc, e as never), step.loaded.state as ArqStreamState);
    const bound = aggregates.arq.decider.decide(completeBind(b, allocation, ctx.at), startedState);
    step.events = [...step.events, ...bound];
    arqUuids.push(b.arqUuid);
  }
  return events.length > 0 ? { step: { ...decided(aggregates.host, hostname, loaded, events as never[]), after: state }, arqUuids } : undefined;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
}
