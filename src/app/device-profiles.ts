/**
 * Device-profile use cases. Uuid uniqueness spans two streams: claim `deviceProfileUuid-<uuid>`,
 * create `deviceProfile-<name>`, then confirm the claim (see domain/device-profiles/uuid-claim.ts);
 * each failed step undoes the ones before it.
 */
import type { DeviceProfileState } from "../domain/device-profiles/decider.js";
import { validateDeviceProfile, type DeviceProfileInput } from "../domain/device-profiles/validation.js";
import { isUuid } from "../domain/shared/json.js";
import { DomainError, MAX_ID_LENGTH, type CommandContext } from "../domain/shared/types.js";
import { deviceProfileView, type DeviceProfileView } from "../domain/device-profiles/view.js";
import type { Loaded } from "./handle.js";
import { aggregates, type Streams } from "./streams.js";

/** `inline`: a profile made for os-acc's inline specs (listed to nobody, deleted with its last ARQ). */
export async function createDeviceProfile(s: Streams, newId: () => string, ctx: CommandContext, input: DeviceProfileInput, inline = false): Promise<DeviceProfileView> {
  const valid = validateDeviceProfile(input);
  const { name } = valid;
  const uuid = (valid.uuid ?? newId()).toLowerCase();
  const existing = await s.load(aggregates.profile, name);
  if (existing.state.status === "active") {
    // Run again under an idempotency key: the profile the earlier attempt made, with the same uuid.
    if (ctx.resuming && existing.state.profile.uuid === uuid) return deviceProfileView(existing.state.profile);
    throw new DomainError("CONFLICT", `A device_profile with name ${name} already exists.`, "name");
  }

  const claim = await s.handle(aggregates.profileUuid, uuid, async (claimState) => ({
    type: "ClaimDeviceProfileUuid" as const,
    data: { uuid, name, staleHolder: await staleHolder(s, claimState.holder, uuid, name) },
  }), ctx);
  const claimed = claim.events.length > 0;

  let created;
  try {
    created = await s.handle(aggregates.profile, name, { type: "CreateDeviceProfile", data: { ...input, uuid, at: ctx.at, inline } }, ctx);
  } catch (err) {
    if (claimed) await s.handle(aggregates.profileUuid, uuid, { type: "ReleaseDeviceProfileUuid", data: { uuid, name } }, ctx);
    throw err;
  }
  try {
    await s.handle(aggregates.profileUuid, uuid, { type: "ConfirmDeviceProfileUuid", data: { uuid, name } }, ctx);
  } catch (err) {
    // A concurrent creation took the uuid over from a claim it judged stale: ours gives way.
    await s.handle(aggregates.profile, name, { type: "DeleteDeviceProfile", data: { name, uuid, at: ctx.at } }, ctx).catch(() => undefined);
    throw err;
  }
  return deviceProfileView(activeProfile(created.state));
}

/** The holder of a uuid claim is stale when its profile is not live with that uuid. */
async function staleHolder(s: Streams, holder: string | null, uuid: string, name: string): Promise<string | null> {
  if (holder === null || holder === name) return null;
  const { state } = await s.load(aggregates.profile, holder);
  return state.status === "active" && state.profile.uuid === uuid ? null : holder;
}

export async function getDeviceProfileFromLog(s: Streams, name: string): Promise<DeviceProfileView | null> {
  const { state } = await s.load(aggregates.profile, name);
  return state.status === "active" ? deviceProfileView(state.profile) : null;
}

/** All or nothing: every profile must exist and be unused before any is deleted. */
export async function deleteDeviceProfiles(s: Streams, ctx: CommandContext, sel: { names?: string[] | null; uuids?: string[] | null }): Promise<string[]> {
  const names = sel.names ?? [];
  const uuids = sel.uuids ?? [];
  if (names.length + uuids.length === 0) throw new DomainError("BAD_USER_INPUT", "give the names or the uuids of the profiles to delete", "names");
  const targets = new Map<string, { name: string; uuid: string }>();
  for (const [i, name] of names.entries()) {
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_ID_LENGTH) {
      throw new DomainError("BAD_USER_INPUT", `a device profile name of 1 to ${MAX_ID_LENGTH} characters is needed`, `names[${i}]`);
    }
    const { state } = await s.load(aggregates.profile, name);
    if (state.status !== "active") throw new DomainError("NOT_FOUND", `Device Profile not found with name=${name}`, `names[${i}]`);
    targets.set(name, { name, uuid: state.profile.uuid });
  }
  for (const [i, raw] of uuids.entries()) {
    if (!isUuid(raw)) throw new DomainError("BAD_USER_INPUT", `Expected a UUID but received ${JSON.stringify(raw)}.`, `uuids[${i}]`);
    const uuid = raw.toLowerCase();
    const name = await profileNameOfUuid(s, uuid);
    if (name === null) throw new DomainError("NOT_FOUND", `Device Profile not found with uuid=${raw}`, `uuids[${i}]`);
    targets.set(name, { name, uuid });
  }
  for (const t of targets.values()) {
    const live = await liveArqCount(s, ctx, t.name);
    if (live > 0) {
      throw new DomainError("CONFLICT", `Device profile ${t.name} is used by ${live} accelerator request${live === 1 ? "" : "s"}; delete them first.`, "names", {
        name: t.name,
        arqCount: live,
      });
    }
  }
  const deleted: string[] = [];
  for (const t of targets.values()) {
    await s.handle(aggregates.profile, t.name, { type: "DeleteDeviceProfile", data: { name: t.name, uuid: t.uuid, at: ctx.at } }, ctx);
    await s.handle(aggregates.profileUuid, t.uuid, { type: "ReleaseDeviceProfileUuid", data: { uuid: t.uuid, name: t.name } }, ctx);
    deleted.push(t.uuid);
  }
  return deleted;
}

async function profileNameOfUuid(s: Streams, uuid: string): Promise<string | null> {
  const { state: claim } = await s.load(aggregates.profileUuid, uuid);
  if (claim.holder === null) return null;
  const { state } = await s.load(aggregates.profile, claim.holder);
  return state.status === "active" && state.profile.uuid === uuid ? claim.holder : null;
}

/**
 * The profile's live ARQs, after dropping those whose ARQ stream says they are gone (an ARQ
 * deletion that stopped before recording itself on the profile stream).
 */
async function liveArqCount(s: Streams, ctx: CommandContext, name: string): Promise<number> {
  const { state } = await s.load(aggregates.profile, name);
  if (state.status !== "active" || state.liveArqs.size === 0) return 0;
  const live = [...state.liveArqs];
  const arqs = await Promise.all(live.map((id) => s.load(aggregates.arq, id)));
  const gone = live.filter((_, i) => arqs[i]!.state.status !== "live");
  if (gone.length === 0) return live.length;
  const healed = await s.handle(aggregates.profile, name, {
    type: "RecordArqsDeleted",
    data: { name, profileUuid: state.profile.uuid, arqUuids: gone, at: ctx.at },
  }, ctx);
  return healed.state.status === "active" ? healed.state.liveArqs.size : 0;
}

function activeProfile(state: DeviceProfileState) {
  if (state.status !== "active") throw new Error("a created profile must be active");
  return state.profile;
}

/**
 * The stream that holds the profile with this uuid now, starting from the name an ARQ was made
 * under: a rename leaves the old name's stream pointing at the new one.
 */
export async function currentProfileStream(s: Streams, name: string, uuid: string): Promise<{ name: string; loaded: Loaded<DeviceProfileState> }> {
  let loaded = await s.load(aggregates.profile, name);
  for (let hops = 0; hops < MAX_RENAME_HOPS && loaded.state.status === "renamed" && loaded.state.profile.uuid === uuid; hops++) {
    name = loaded.state.newName;
    loaded = await s.load(aggregates.profile, name);
  }
  return { name, loaded };
}

/** Renames followed from an ARQ's profile name to where its profile is now. */
const MAX_RENAME_HOPS = 64;

/**
 * Inline profiles (os-acc) live as long as their ARQs: each one this release left with no live
 * ARQ is deleted, and its uuid released. One still in use (an ARQ made meanwhile) stays.
 */
export async function removeUnusedInlineProfiles(s: Streams, ctx: CommandContext, profiles: ReadonlyArray<{ id: string; result?: Loaded<DeviceProfileState> }>): Promise<void> {
  for (const p of profiles) {
    const st = p.result?.state;
    if (st?.status !== "active" || !st.profile.inline || st.liveArqs.size > 0) continue;
    const { uuid, name } = st.profile;
    try {
      await s.handle(aggregates.profile, name, { type: "DeleteDeviceProfile", data: { name, uuid, at: ctx.at } }, ctx);
    } catch (err) {
      if (err instanceof DomainError && (err.code === "CONFLICT" || err.code === "NOT_FOUND")) continue;
      throw err;
    }
    await s.handle(aggregates.profileUuid, uuid, { type: "ReleaseDeviceProfileUuid", data: { uuid, name } }, ctx);
  }
}
