/**
 * Repairing what a decision that spans streams left half done (a crash, a transport error, a lost
 * race between processes): the ARQ, the hosts that may hold a handle for it and its profile are
 * read from the log, checked (domain/arqs/invariants.ts), and each violation is completed or
 * compensated through the same use cases the service runs, each idempotent and decided on the
 * streams as they are now. The invariant checker (reactors/invariants/) calls it.
 */
import type { ArqStreamState } from "../../domain/arqs/arq.js";
import { liveArq } from "../../domain/arqs/decider.js";
import { arqViolations, type HeldHandle, type Violation } from "../../domain/arqs/invariants.js";
import type { HostState } from "../../domain/inventory/state.js";
import type { CommandContext } from "../../domain/shared/types.js";
import { currentProfileStream } from "../device-profiles.js";
import type { Loaded } from "../handle.js";
import { aggregates, Decided, type Streams } from "../streams.js";
import { releaseOrphanedHandle } from "./orphaned-handle.js";
import { deleteArqs } from "./release.js";

export interface Repair {
  arqUuid: string;
  violation: Violation["kind"];
  /** What was done: "released", "failed", "recorded", "deleted", "recorded deletion"; "none" when the streams had moved on; "left" when nothing safe can be done. */
  action: "released" | "failed" | "recorded" | "deleted" | "recorded deletion" | "none" | "left";
  hostname?: string;
  /** The project whose quota claim was released (orphaned-claim). */
  projectId?: string;
}

/**
 * `hostnames`: hosts that may hold a handle for the ARQ (besides the one it names); `claimedBy`: a
 * project whose quota may hold a claim for it (besides the ARQ's own project).
 */
export async function repairArq(s: Streams, ctx: CommandContext, arqUuid: string, hostnames: readonly string[], claimedBy: string | null = null): Promise<Repair[]> {
  const arq = await s.load(aggregates.arq, arqUuid);
  const named = arq.state.status === "absent" ? null : arq.state.arq.hostname;
  const hosts = await Promise.all([...new Set([...hostnames, ...(named ? [named] : [])])].map(async (h) => ({ hostname: h, loaded: await s.load(aggregates.host, h) })));
  const allocations: HeldHandle[] = hosts.flatMap(({ hostname, loaded }) => {
    const a = loaded.state.allocations.get(arqUuid);
    return a ? [{ hostname, rpUuid: a.rpUuid, instanceUuid: a.instanceUuid, handleUuid: a.handleUuid }] : [];
  });
  const { recorded, profileName } = await recordedByProfile(s, arq.state);
  const claim = await claimOf(s, arqUuid, [...new Set([claimedBy, arq.state.status === "absent" ? null : arq.state.arq.projectId].filter((p): p is string => !!p))]);
  const repairs: Repair[] = [];
  for (const v of arqViolations({ arq: arq.state, allocations, recorded, claimedBy: claim })) {
    repairs.push({ arqUuid, violation: v.kind, ...(await repairOne(s, ctx, arqUuid, arq, hosts, v, { recorded, profileName })) });
  }
  return repairs;
}

async function repairOne(
  s: Streams,
  ctx: CommandContext,
  arqUuid: string,
  arq: Loaded<ArqStreamState>,
  hosts: ReadonlyArray<{ hostname: string; loaded: Loaded<HostState> }>,
  v: Violation,
  { recorded, profileName }: ProfileRecord,
): Promise<Pick<Repair, "action" | "hostname" | "projectId">> {
  switch (v.kind) {
    case "orphaned-allocation":
      return { action: (await releaseOrphanedHandle(s, ctx, v.hostname, arqUuid)) ? "released" : "none", hostname: v.hostname };
    case "bound-without-handle":
      return { action: (await failBoundWithoutHandle(s, ctx, arqUuid, arq, hosts)) ? "failed" : "none" };
    case "unrecorded": {
      const a = liveArq(arq.state)!;
      // A creation that never answered its caller is undone; an ARQ in use is kept and recorded.
      if (v.initial) return { action: (await deleteArqs(s, ctx, { arqUuids: [arqUuid] })).length > 0 ? "deleted" : "none" };
      if (recorded === null) return { action: "left" };
      const data = { name: profileName, profileUuid: a.deviceProfileUuid, arqUuids: [arqUuid], at: ctx.at };
      const r = await s.handle(aggregates.profile, profileName, { type: "RecordArqsCreated", data }, ctx);
      return { action: r.events.length > 0 ? "recorded" : "none" };
    }
    case "orphaned-claim": {
      // Decided on the quota stream as it is now: a claim released meanwhile releases nothing.
      const r = await s.handle(aggregates.quota, v.projectId, { type: "Release", data: { projectId: v.projectId, arqUuids: [arqUuid], at: ctx.at } }, ctx);
      return { action: r.events.length > 0 ? "released" : "none", projectId: v.projectId };
    }
    case "deleted-still-recorded": {
      const a = arq.state.status === "deleted" ? arq.state.arq : null;
      if (!a) return { action: "none" };
      const data = { name: profileName, profileUuid: a.deviceProfileUuid, arqUuids: [arqUuid], at: ctx.at };
      const r = await s.handle(aggregates.profile, profileName, { type: "RecordArqsDeleted", data }, ctx);
      return { action: r.events.length > 0 ? "recorded deletion" : "none" };
    }
  }
}

/** The first of these projects whose quota holds a claim for the ARQ; null when none does. */
async function claimOf(s: Streams, arqUuid: string, projects: readonly string[]): Promise<string | null> {
  for (const projectId of projects) if ((await s.load(aggregates.quota, projectId)).state.claims.has(arqUuid)) return projectId;
  return null;
}

interface ProfileRecord {
  /** Whether the ARQ's profile (its incarnation) counts it as live; null when that profile is gone. */
  recorded: boolean | null;
  /** The stream the profile lives in now (the name the ARQ was made under, or where renames took it). */
  profileName: string;
}

async function recordedByProfile(s: Streams, state: ArqStreamState): Promise<ProfileRecord> {
  if (state.status === "absent") return { recorded: null, profileName: "" };
  const { name, loaded } = await currentProfileStream(s, state.arq.deviceProfileName, state.arq.deviceProfileUuid);
  const profile = loaded.state;
  if (profile.status !== "active" || profile.profile.uuid !== state.arq.deviceProfileUuid) return { recorded: null, profileName: name };
  return { recorded: profile.liveArqs.has(state.arq.uuid), profileName: name };
}

/**
 * A BOUND ARQ whose handle no host holds fails (BIND_FAILED, the reason says why), appended with
 * checks that neither the ARQ nor the hosts looked at moved since they were read.
 */
async function failBoundWithoutHandle(s: Streams, ctx: CommandContext, arqUuid: string, arq: Loaded<ArqStreamState>, hosts: ReadonlyArray<{ hostname: string; loaded: Loaded<HostState> }>): Promise<boolean> {
  const a = liveArq(arq.state);
  if (!a || a.state !== "BOUND") return false;
  const reason = `its attach handle ${a.attachment?.handleUuid ?? ""} is no longer allocated to it on host ${a.hostname ?? ""}`;
  const events = aggregates.arq.decider.decide({ type: "FailArqBind", data: { arqUuid, reason, onlyFrom: ["BOUND"], at: ctx.at } }, arq.state);
  const guards = hosts.map((h) => new Decided(aggregates.host, h.hostname, h.loaded, []));
  const { refusal } = await s.appendSequence([...guards, new Decided(aggregates.arq, arqUuid, arq, events)], ctx);
  return !refusal;
}
