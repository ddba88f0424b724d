/**
 * A device profile's changes after creation: update (a new version), enable and disable, rename
 * (the profile stream moves, the uuid claim follows: see domain/device-profiles/lifecycle.ts), and
 * migrations of renamed traits and resource classes over every profile.
 */
import type { DeviceProfileEvent } from "../domain/device-profiles/events.js";
import type { DeviceProfileUuidEvent } from "../domain/device-profiles/events.js";
import { migrateGroups, validateMigrationMapping, type ProfileKeyChange } from "../domain/device-profiles/migration.js";
import { requireActive, type DeviceProfile, type DeviceProfileState } from "../domain/device-profiles/state.js";
import { validateProfileName } from "../domain/device-profiles/validation.js";
import { deviceProfileView, type DeviceProfileView } from "../domain/device-profiles/view.js";
import { DomainError, MAX_ID_LENGTH, type CommandContext } from "../domain/shared/types.js";
import { aggregates, Decided, type Streams } from "./streams.js";

export interface ProfileUpdate {
  name: string;
  description?: unknown;
  groups?: unknown;
  expectedVersion?: number | null;
}

export async function updateDeviceProfile(s: Streams, ctx: CommandContext, input: ProfileUpdate): Promise<DeviceProfileView> {
  const name = profileName(input.name, "name");
  const { state } = await s.handle(aggregates.profile, name, { type: "UpdateDeviceProfile", data: { ...input, name, at: ctx.at } }, ctx);
  return viewOf(state, name);
}

export async function setDeviceProfileEnabled(s: Streams, ctx: CommandContext, rawName: string, enabled: boolean): Promise<DeviceProfileView> {
  const name = profileName(rawName, "name");
  const { state } = await s.handle(aggregates.profile, name, { type: "SetDeviceProfileEnabled", data: { name, enabled, at: ctx.at } }, ctx);
  return viewOf(state, name);
}

/**
 * Renames a profile, keeping its uuid, versions and ARQs: the old stream's rename, the new
 * stream's takeover and the uuid claim's transfer, appended in that order as one sequence. The
 * old stream goes first at its exact revision, so an ARQ creation recorded meanwhile is either in
 * what moves or refused; a later step refused (the new name taken meanwhile) moves it back.
 */
export async function renameDeviceProfile(s: Streams, ctx: CommandContext, rawName: string, rawNewName: string): Promise<DeviceProfileView> {
  const name = profileName(rawName, "name");
  const newName = validateProfileName(rawNewName, "newName");
  for (let attempt = 1; attempt <= 3; attempt++) {
    const { steps, left } = await planMove(s, name, newName, ctx.at);
    const r = await s.appendSequence(steps, ctx);
    if (!r.refusal) return viewOf(steps[1]!.result!.state as DeviceProfileState, newName);
    if (steps[0]!.result) {
      await moveBack(s, ctx, name, newName, left);
      throw new DomainError("CONFLICT", `Device profile ${newName} was created meanwhile, or ${name}'s uuid changed hands; nothing was renamed.`, "newName");
    }
  }
  throw new DomainError("CONFLICT", `Device profile ${name} is too busy to rename; try again.`, "name");
}

type Step = Decided<unknown, DeviceProfileEvent | DeviceProfileUuidEvent>;

async function planMove(s: Streams, name: string, newName: string, at: string) {
  const old = await s.load(aggregates.profile, name);
  const renamed = aggregates.profile.decider.decide({ type: "RenameDeviceProfile", data: { name, newName, at } }, old.state);
  const { profile, liveArqs } = requireActive(old.state, name, undefined);
  const target = await s.load(aggregates.profile, newName);
  const taken = aggregates.profile.decider.decide({ type: "ReceiveRenamedProfile", data: { newName, profile, liveArqUuids: [...liveArqs], at } }, target.state);
  const claim = await s.load(aggregates.profileUuid, profile.uuid);
  const moved = aggregates.profileUuid.decider.decide({ type: "TransferDeviceProfileUuid", data: { uuid: profile.uuid, name, newName } }, claim.state);
  const steps = [
    new Decided(aggregates.profile, name, old, renamed),
    new Decided(aggregates.profile, newName, target, taken),
    new Decided(aggregates.profileUuid, profile.uuid, claim, moved),
  ] as Step[];
  return { steps, left: { profile, liveArqUuids: [...liveArqs] } };
}

/**
 * Undoes a rename that stopped half-way: the profile goes back to `name`, with the live ARQs it
 * had when it left (or, when the new stream took it, those the new stream holds now).
 */
async function moveBack(s: Streams, ctx: CommandContext, name: string, newName: string, left: { profile: DeviceProfile; liveArqUuids: string[] }): Promise<void> {
  let back = left;
  const there = await s.load(aggregates.profile, newName);
  if (there.state.status === "active" && there.state.profile.uuid === left.profile.uuid) {
    back = { profile: there.state.profile, liveArqUuids: [...there.state.liveArqs] };
    await s.handle(aggregates.profile, newName, { type: "RenameDeviceProfile", data: { name: newName, newName: name, at: ctx.at } }, ctx);
  }
  await s.handle(aggregates.profile, name, { type: "ReceiveRenamedProfile", data: { newName: name, profile: { ...back.profile, name: newName }, liveArqUuids: back.liveArqUuids, at: ctx.at } }, ctx);
}

/** What a migration did, or would do, to one profile. */
export interface ProfileMigrationResult {
  name: string;
  uuid: string;
  fromVersion: number;
  /** The version the migration made; null on a dry run. */
  toVersion: number | null;
  changes: ProfileKeyChange[];
}

/**
 * Applies a mapping of renamed traits and resource classes to the profiles named (every profile
 * the caller lists), each changed one as a new version whose event records the renamings. All or
 * nothing: a profile the mapping would make invalid refuses the whole migration before anything is
 * written. A dry run writes nothing and answers what would change. Running it again changes
 * nothing more (the old names are gone).
 */
export async function migrateDeviceProfiles(s: Streams, ctx: CommandContext, names: readonly string[], rawMapping: unknown, dryRun: boolean): Promise<ProfileMigrationResult[]> {
  const mapping = validateMigrationMapping(rawMapping);
  const planned: ProfileMigrationResult[] = [];
  for (const name of names) {
    const { state } = await s.load(aggregates.profile, name);
    if (state.status !== "active" || state.profile.inline) continue;
    try {
      const { changes } = migrateGroups(state.profile.groups, mapping);
      if (changes.length > 0) planned.push({ name, uuid: state.profile.uuid, fromVersion: state.profile.version, toVersion: null, changes });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      throw new DomainError("BAD_USER_INPUT", `The migration would make device profile ${name} invalid (${err.message}); nothing was migrated.`, "mapping", { name });
    }
  }
  if (dryRun) return planned;
  for (const p of planned) {
    const { state } = await s.handle(aggregates.profile, p.name, { type: "MigrateDeviceProfile", data: { name: p.name, mapping, at: ctx.at } }, ctx);
    p.toVersion = state.status === "active" ? state.profile.version : null;
  }
  return planned;
}

function profileName(name: unknown, field: string): string {
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_ID_LENGTH) {
    throw new DomainError("BAD_USER_INPUT", `a device profile name of 1 to ${MAX_ID_LENGTH} characters is needed`, field);
  }
  return name;
}

function viewOf(state: DeviceProfileState, name: string): DeviceProfileView {
  return deviceProfileView(requireActive(state, name, undefined).profile);
}
