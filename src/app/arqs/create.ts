/** Creating ARQs from a device profile (cyborg-reference 2.3). */
import type { ArqStreamState } from "../../domain/arqs/arq.js";
import { liveArq } from "../../domain/arqs/decider.js";
import type { ArqEvent } from "../../domain/arqs/events.js";
import { planArqs, type PlannedArq } from "../../domain/arqs/plan.js";
import { arqCountFor } from "../../domain/device-profiles/arq-counts.js";
import { arqView, type ArqView } from "../../domain/arqs/view.js";
import type { DeviceProfileState } from "../../domain/device-profiles/decider.js";
import type { ProfileGroup } from "../../domain/device-profiles/events.js";
import { DomainError, MAX_ID_LENGTH, type CommandContext } from "../../domain/shared/types.js";
import { conflictBackoff, MAX_ATTEMPTS, type DomainEventShape, type Loaded } from "../handle.js";
import { aggregates, Decided, type Streams } from "../streams.js";
import { backfillOnFirstUse, decideClaim, quotaProject, releaseClaims, type ArqQuota } from "./quota.js";

/** The most ARQs one creation may make. */
export const MAX_ARQS_PER_CREATE = 1000;

/** A caller's own check of the request (the profile's groups, the ARQ count), before anything is written: throws to refuse. */
export type CreationCheck = (groups: readonly ProfileGroup[], count: number) => void;

export async function createArqs(
  s: Streams,
  newId: () => string,
  ctx: CommandContext,
  input: { deviceProfileName: string; groupIndex?: number | null; check?: CreationCheck },
  quota?: ArqQuota,
): Promise<ArqView[]> {
  const name = input.deviceProfileName;
  const { loadedProfile, state } = await loadActiveProfile(s, name);
  const profile = state.profile;
  const count = arqCountFor(profile.groups, input.groupIndex);
  if (count > MAX_ARQS_PER_CREATE) {
    throw new DomainError("BAD_USER_INPUT", `the profile asks for ${count} ARQs; at most ${MAX_ARQS_PER_CREATE} per request`, "groupIndex");
  }
  input.check?.(profile.groups, count);
  if (count === 0) return [];
  const ids = Array.from({ length: count }, () => newId());
  const loaded = await Promise.all(ids.map((id) => s.load(aggregates.arq, id)));
  // Run again under an idempotency key: the ARQs an earlier attempt made with these ids stay.
  const made = new Set(ids.filter((_, i) => loaded[i]!.revision >= 0));
  if (made.size > 0 && !ctx.resuming) throw new DomainError("CONFLICT", "an ARQ id is taken; try again");
  if (made.size === count) {
    // The earlier attempt may have stopped before its profile step: record them now.
    await recordCreation(s, ctx, profile.name, profile.uuid, input.groupIndex ?? null, ids);
    return loaded.flatMap((l) => viewOf(l));
  }
  const project = quotaProject(quota, ctx);
  const plan = planArqs(profile.groups, input.groupIndex, ids);
  // The ARQs first, then the profile's record of them, in one sequence (one commit on lmdb).
  // Creators do not serialize on the profile stream: the record is appended without an exact
  // revision, and the stream's order decides. A deletion or re-creation that landed first makes
  // evolve ignore the record, and the ARQs are deleted again; a deletion that comes later sees
  // them (it appends with an exact revision).
  const arqSteps = decideArqCreations(plan, made, loaded, profile, ctx);
  const record = aggregates.profile.decider.decide({
    type: "CreateArqs",
    data: { name: profile.name, profileUuid: profile.uuid, groupIndex: input.groupIndex ?? null, arqUuids: ids, at: ctx.at },
  }, state);
  const recordStep = new Decided(aggregates.profile, profile.name, loadedProfile!, record, { expected: "stream_exists" });
  try {
    const claim = project ? { projectId: project, quota: quota!, arqs: plan } : null;
    const r = await appendCreation(s, ctx, [...arqSteps, recordStep], claim);
    // A refused ARQ step: an ARQ id already taken.
    if (r.refusal && !arqSteps.every((st) => st.result)) throw new DomainError("CONFLICT", `creating the ARQs was refused (${r.refusal.message}); try again`);
    // A refused record step is tried again on the profile as it is now; only a profile that is gone refuses it.
    const recorded = r.refusal ? await recordCreation(s, ctx, profile.name, profile.uuid, input.groupIndex ?? null, ids) : recordStep.result!;
    const now = recorded.state;
    const took = now.status === "active" && now.profile.uuid === profile.uuid && ids.every((id) => now.liveArqs.has(id));
    if (!took) throw new DomainError("NOT_FOUND", `Device Profile not found with name=${name} (it was deleted while the ARQs were being created)`, "deviceProfileName");
  } catch (err) {
    await undoArqCreations(s, arqSteps, ctx, project);
    throw err;
  }
  const appended = new Map(arqSteps.map((st) => [st.id, st.result!]));
  return ids.flatMap((id, i) => viewOf(appended.get(id) ?? loaded[i]!));
}

/**
 * The profile's record of a creation's ARQs, appended on the profile as it is now (exact revision,
 * tried again after a concurrent change): the profile's state once it records them, or as it is
 * when it cannot (gone, or another incarnation).
 */
async function recordCreation(s: Streams, ctx: CommandContext, name: string, profileUuid: string, groupIndex: number | null, arqUuids: string[]): Promise<Loaded<DeviceProfileState>> {
  for (let attempt = 1; ; attempt++) {
    const loaded = await s.load(aggregates.profile, name);
    const state = loaded.state;
    if (state.status !== "active" || state.profile.uuid !== profileUuid || arqUuids.every((id) => state.liveArqs.has(id))) return loaded;
    const events = aggregates.profile.decider.decide({ type: "CreateArqs", data: { name, profileUuid, groupIndex, arqUuids, at: ctx.at } }, state);
    const step = new Decided(aggregates.profile, name, loaded, events);
    const { refusal } = await s.appendSequence([step], ctx);
    if (!refusal) return step.result!;
    if (attempt >= MAX_ATTEMPTS) throw new DomainError("CONFLICT", `recording the ARQs on device profile ${name} met ${attempt} concurrent updates; try again`);
    await conflictBackoff(attempt);
  }
}

type ActiveProfileState = Extract<DeviceProfileState, { status: "active" }>;

/** The profile the ARQs are made from: it must exist and be active. */
async function loadActiveProfile(s: Streams, name: string): Promise<{ loadedProfile: Loaded<DeviceProfileState>; state: ActiveProfileState }> {
  if (typeof name === "string" && name.length > MAX_ID_LENGTH) throw new DomainError("BAD_USER_INPUT", `a device profile name is at most ${MAX_ID_LENGTH} characters`, "deviceProfileName");
  const loadedProfile = typeof name === "string" && name.length > 0 ? await s.load(aggregates.profile, name) : null;
  const state = loadedProfile?.state;
  if (state?.status !== "active") throw new DomainError("NOT_FOUND", `Device Profile not found with name=${String(name)}`, "deviceProfileName");
  return { loadedProfile: loadedProfile!, state };
}

/** A CreateArq decision for each planned ARQ an earlier attempt did not make. */
function decideArqCreations(
  plan: readonly PlannedArq[],
  made: ReadonlySet<string>,
  loaded: ReadonlyArray<Loaded<ArqStreamState>>,
  profile: ActiveProfileState["profile"],
  ctx: CommandContext,
): Array<Decided<ArqStreamState, ArqEvent>> {
  const arqSteps = [];
  for (const [i, p] of plan.entries()) {
    if (made.has(p.arqUuid)) continue;
    const events = aggregates.arq.decider.decide({
      type: "CreateArq",
      data: {
        arqUuid: p.arqUuid,
        deviceProfileName: profile.name,
        deviceProfileUuid: profile.uuid,
        deviceProfileGroupId: p.groupId,
        deviceProfileVersion: profile.version,
        group: p.group,
        projectId: ctx.projectId ?? null,
        at: ctx.at,
      },
    }, loaded[i]!.state);
    arqSteps.push(new Decided(aggregates.arq, p.arqUuid, loaded[i]!, events));
  }
  return arqSteps;
}

/**
 * The ARQs and the profile's record of them, after their claim on the project's quota when one
 * applies, as one sequence (one commit on lmdb). The claim is appended at the quota stream's exact
 * revision: a claim refused by a concurrent one is decided again on the stream as it is now.
 */
async function appendCreation(
  s: Streams,
  ctx: CommandContext,
  steps: ReadonlyArray<Decided<unknown, DomainEventShape>>,
  claim: { projectId: string; quota: ArqQuota; arqs: readonly PlannedArq[] } | null,
): Promise<{ refusal?: Error }> {
  if (!claim) return s.appendSequence(steps, ctx);
  const quotaStream = aggregates.quota.streamName(claim.projectId);
  await backfillOnFirstUse(s, claim.quota, claim.projectId, ctx);
  for (let attempt = 1; ; attempt++) {
    const out = await s.locks.run([quotaStream], async () => {
      const step = await decideClaim(s, claim.projectId, claim.arqs, claim.quota, ctx);
      const r = await s.appendSequence(step ? [step, ...steps] : steps, ctx);
      return { r, claimRefused: step !== null && r.refusal !== undefined && !step.result };
    });
    if (!out.claimRefused) return out.r;
    if (attempt >= MAX_ATTEMPTS) throw new DomainError("CONFLICT", `claiming project ${claim.projectId}'s quota met ${attempt} concurrent creations; try again`);
    await conflictBackoff(attempt);
  }
}

/** Deletes the ARQs of a creation that did not take, and releases their claims on the project's quota. */
async function undoArqCreations(s: Streams, arqSteps: ReadonlyArray<Decided<ArqStreamState, ArqEvent>>, ctx: CommandContext, project: string | null): Promise<void> {
  const appended = arqSteps.filter((st) => st.result);
  await Promise.all(appended.map((st) => s.handle(aggregates.arq, st.id, { type: "DeleteArq", data: { arqUuid: st.id, at: ctx.at } }, ctx).catch(() => undefined)));
  // Claims are released for every ARQ this creation meant to make, appended or not (a claim
  // without its ARQ would count against the project for nothing).
  if (project && arqSteps.length > 0) await releaseClaims(s, project, arqSteps.map((st) => st.id), ctx).catch(() => undefined);
}

function viewOf(l: { state: Parameters<typeof liveArq>[0]; revision: number; position: bigint | null }): ArqView[] {
  const arq = liveArq(l.state);
  return arq ? [arqView(arq, l.revision, l.position!)] : [];
}

export async function getArq(s: Streams, arqUuid: string): Promise<ArqView | null> {
  const { state, revision, position } = await s.load(aggregates.arq, arqUuid);
  const arq = liveArq(state);
  return arq ? arqView(arq, revision, position!) : null;
}
