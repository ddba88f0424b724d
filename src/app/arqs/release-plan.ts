/**
 * One release call's decisions (unbind or delete ARQs): each ARQ's own event, then what it held
 * freed: its handle on its host's stream, its place on its instance's stream and, for a delete,
 * on its profile's stream and its claim on its project's quota stream. Appended as one sequence (append-plan.ts).
 *
 * What an ARQ held is taken from its event (previousHostname, previousInstanceUuid), and kept in
 * `held` across attempts: a retry after the ARQ's step was appended finds the ARQ already released
 * (its event decides nothing again) but still frees what it held. An ARQ whose step an earlier
 * attempt committed (`released`) is not decided again: another process may have bound it since,
 * and that binding is not this release's to undo. What it held is then freed only where the ARQ,
 * as it is now, does not hold it: its handle (as a bind's undo does, orphaned-handle.ts) and its
 * place on its instance.
 */
import type { ArqStreamState } from "../../domain/arqs/arq.js";
import { liveArq } from "../../domain/arqs/decider.js";
import type { ArqEvent } from "../../domain/arqs/events.js";
import { holdsHandle } from "../../domain/arqs/invariants.js";
import { arqView, type ArqView } from "../../domain/arqs/view.js";
import type { DeviceProfileState } from "../../domain/device-profiles/decider.js";
import type { DeviceProfileEvent } from "../../domain/device-profiles/events.js";
import type { InstanceState } from "../../domain/instances/decider.js";
import type { InstanceEvent } from "../../domain/instances/events.js";
import type { InventoryEvent } from "../../domain/inventory/events.js";
import type { HostState } from "../../domain/inventory/state.js";
import { awaitsPartition } from "../../domain/inventory/partition-record.js";
import type { QuotaState } from "../../domain/quotas/decider.js";
import type { QuotaEvent } from "../../domain/quotas/events.js";
import { fold } from "../../domain/shared/decider.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { DomainEventShape, Loaded } from "../handle.js";
import { currentProfileStream } from "../device-profiles.js";
import { aggregates, Decided, type Streams } from "../streams.js";

/** What a released ARQ held, as its release event told. */
export interface Held {
  hostname: string | null;
  instanceUuid: string | null;
  /** The profile to record the deletion on (deletes only). */
  profile: { name: string; uuid: string } | null;
  /** The project whose quota the ARQ's claim is released from (deletes only). */
  projectId: string | null;
}

export class ReleasePlan {
  readonly arqSteps: Array<Decided<ArqStreamState, ArqEvent>> = [];
  readonly hostSteps: Array<Decided<HostState, InventoryEvent>> = [];
  readonly instanceSteps: Array<Decided<InstanceState, InstanceEvent>> = [];
  readonly profileSteps: Array<Decided<DeviceProfileState, DeviceProfileEvent>> = [];
  readonly quotaSteps: Array<Decided<QuotaState, QuotaEvent>> = [];
  readonly arqs = new Map<string, Loaded<ArqStreamState>>();

  get steps(): Array<Decided<unknown, DomainEventShape>> {
    return [...this.arqSteps, ...this.hostSteps, ...this.instanceSteps, ...this.profileSteps, ...this.quotaSteps];
  }

  /** The ARQ after the plan was appended (or as loaded); null once deleted. */
  view(arqUuid: string): ArqView | null {
    const now = this.arqSteps.find((st) => st.id === arqUuid)?.result ?? this.arqs.get(arqUuid)!;
    const live = liveArq(now.state);
    return live && arqView(live, now.revision, now.position!);
  }
}

export interface ReleaseRequest {
  how: "unbind" | "delete";
  arqUuids: readonly string[];
  /** Also release these ARQs from this instance's record (delete by instance: stale and never-started ones). */
  instance?: { instanceUuid: string; arqUuids: readonly string[] };
}

/** What earlier attempts of one release learnt: what each ARQ held, and whose release step was committed. */
export interface Released {
  held: Map<string, Held>;
  committed: Set<string>;
}

export async function planRelease(s: Streams, ctx: CommandContext, req: ReleaseRequest, { held, committed }: Released): Promise<ReleasePlan> {
  const plan = new ReleasePlan();
  const at = ctx.at;
  const loaded = await Promise.all(req.arqUuids.map((id) => s.load(aggregates.arq, id)));
  /** Each ARQ as this plan leaves it. */
  const after = new Map<string, ArqStreamState>();
  req.arqUuids.forEach((arqUuid, i) => {
    const l = loaded[i]!;
    plan.arqs.set(arqUuid, l);
    if (committed.has(arqUuid)) {
      after.set(arqUuid, l.state);
      return;
    }
    const events = aggregates.arq.decider.decide({ type: req.how === "delete" ? "DeleteArq" : "UnbindArq", data: { arqUuid, at } }, l.state);
    for (const e of events) {
      if (e.type === "ArqUnbound") held.set(arqUuid, { hostname: e.data.previousHostname, instanceUuid: e.data.previousInstanceUuid, profile: null, projectId: null });
      if (e.type === "ArqDeleted") {
        const d = e.data;
        held.set(arqUuid, { hostname: d.previousHostname, instanceUuid: d.previousInstanceUuid, profile: { name: d.deviceProfileName, uuid: d.deviceProfileUuid }, projectId: liveArq(l.state)?.projectId ?? null });
      }
    }
    after.set(arqUuid, fold(aggregates.arq.decider, l.state, events));
    if (events.length > 0) plan.arqSteps.push(new Decided(aggregates.arq, arqUuid, l, events));
  });
  // Step by step (EventStoreDB), what the ARQs held is freed only if none moved since its release
  // (a bind started there by another process): a check on each ARQ's stream right after its step.
  for (const st of [...plan.arqSteps]) {
    const released = { state: after.get(st.id)!, revision: st.loaded.revision + st.events.length, position: null };
    plan.arqSteps.push(new Decided(aggregates.arq, st.id, released, []));
  }
  /** A handle is released only while its ARQ, unmoved since loaded, does not hold it (orphaned-handle.ts). */
  const guard = (arqUuid: string) => {
    if (!plan.arqSteps.some((st) => st.id === arqUuid)) plan.arqSteps.push(new Decided(aggregates.arq, arqUuid, plan.arqs.get(arqUuid)!, []));
  };

  const byHost = group(held, (h) => h.hostname);
  const byInstance = group(held, (h) => h.instanceUuid);
  if (req.instance) byInstance.set(req.instance.instanceUuid, [...new Set([...(byInstance.get(req.instance.instanceUuid) ?? []), ...req.instance.arqUuids])]);
  const byProfile = group(held, (h) => (h.profile ? `${h.profile.name}\n${h.profile.uuid}` : null));
  const byProject = group(held, (h) => h.projectId);
  await Promise.all([
    ...[...byProject].map(async ([projectId, arqUuids]) => {
      const l = await s.load(aggregates.quota, projectId);
      const events = aggregates.quota.decider.decide({ type: "Release", data: { projectId, arqUuids, at } }, l.state);
      // A stream not started yet may be started by a creation's backfill, which claims the project's
      // ARQs (these too): the release then waits on it as it stands (no event, its revision checked).
      if (events.length > 0 || !l.state.started) plan.quotaSteps.push(new Decided(aggregates.quota, projectId, l, events));
    }),
    ...[...byHost].map(async ([hostname, arqUuids]) => {
      const l = await s.load(aggregates.host, hostname);
      let state = l.state;
      const events: InventoryEvent[] = [];
      for (const arqUuid of arqUuids) {
        const a = state.allocations.get(arqUuid);
        // Another process bound the ARQ again with this allocation after an earlier attempt released it.
        if (a ? holdsHandle(liveArq(after.get(arqUuid)!), { hostname, ...a }) : !awaitsPartition(state, arqUuid)) continue;
        const released = aggregates.host.decider.decide({ type: "ReleaseAttachHandle", data: { hostname, arqUuid, at, keepIdlePartitions: s.policies.keepIdlePartitions } }, state);
        state = fold(aggregates.host.decider, state, released);
        events.push(...released);
        guard(arqUuid);
      }
      if (events.length > 0) plan.hostSteps.push(new Decided(aggregates.host, hostname, l, events, { after: state }));
    }),
    ...[...byInstance].map(async ([instanceUuid, listed]) => {
      // An ARQ bound to this instance again by another process stays on its record.
      const arqUuids = listed.filter((id) => !onInstance(after.get(id), instanceUuid));
      arqUuids.filter((id) => after.has(id)).forEach(guard);
      if (arqUuids.length === 0) return;
      const l = await s.load(aggregates.instance, instanceUuid);
      const events = aggregates.instance.decider.decide({ type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids: [...arqUuids], at } }, l.state);
      if (events.length > 0) plan.instanceSteps.push(new Decided(aggregates.instance, instanceUuid, l, events));
    }),
    ...[...byProfile].map(async ([key, arqUuids]) => {
      const [madeUnder, profileUuid] = key.split("\n") as [string, string];
      const { name, loaded: l } = await currentProfileStream(s, madeUnder, profileUuid);
      const events = aggregates.profile.decider.decide({ type: "RecordArqsDeleted", data: { name, profileUuid, arqUuids, at } }, l.state);
      // Deletions commute on the profile stream: appended wherever it is (see create.ts).
      if (events.length > 0) plan.profileSteps.push(new Decided(aggregates.profile, name, l, events, { expected: "stream_exists" }));
    }),
  ]);
  return plan;
}

/** Whether the ARQ (as this plan leaves it) is binding or bound to the instance. */
function onInstance(arq: ArqStreamState | undefined, instanceUuid: string): boolean {
  const live = arq && liveArq(arq);
  return !!live && live.instanceUuid === instanceUuid && (live.state === "BIND_STARTED" || live.state === "BOUND");
}

function group(held: ReadonlyMap<string, Held>, key: (h: Held) => string | null): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [arqUuid, h] of held) {
    const k = key(h);
    if (k !== null) out.set(k, [...(out.get(k) ?? []), arqUuid]);
  }
  return out;
}
