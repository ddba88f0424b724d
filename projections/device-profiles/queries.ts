/** The device-profiles read model's queries: by name, by uuid, all in creation order, and versions. */
import type { DeviceProfileVersionView, DeviceProfileView } from "../../src/domain/device-profiles/view.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { k, versionKey, type StoredProfile } from "./projection.js";

/** Docs written before profiles had versions read as version 1, enabled, not inline. */
const view = ({ position: _, ...p }: StoredProfile): DeviceProfileView => ({ ...p, version: p.version ?? 1, enabled: p.enabled ?? true, inline: p.inline ?? false });

/**
 * All profiles, or those named (unknown names are left out), in creation order. Inline profiles
 * (os-acc's) are never listed: each is read by its name only.
 */
export async function listProfiles(store: ReadStore, names?: readonly string[]): Promise<DeviceProfileView[]> {
  const wanted = names ? [...new Set(names)] : (await store.getMembers([k("all")]))[0]!;
  const docs = ((await store.getDocs(wanted.map((n) => k("profile", n)))) as Array<StoredProfile | null>).filter((d) => d !== null && d.inline !== true);
  if (names) docs.sort((a, b) => (BigInt(a!.position) < BigInt(b!.position) ? -1 : 1));
  return docs.map((d) => view(d!));
}

export async function getProfilesByName(store: ReadStore, names: readonly string[]): Promise<Array<DeviceProfileView | null>> {
  return ((await store.getDocs(names.map((n) => k("profile", n)))) as Array<StoredProfile | null>).map((d) => d && view(d));
}

export async function getProfileByName(store: ReadStore, profileName: string): Promise<DeviceProfileView | null> {
  return (await getProfilesByName(store, [profileName]))[0]!;
}

export async function getProfileByUuid(store: ReadStore, uuid: string): Promise<DeviceProfileView | null> {
  const [ref] = await store.getDocs([k("uuid", uuid)]);
  if (!ref) return null;
  const profile = await getProfileByName(store, ref.name as string);
  // A uuid claimed by a profile that was deleted and re-created with another uuid is not its uuid.
  return profile && profile.uuid === uuid ? profile : null;
}

/** Versions 1..upTo of the profile with this uuid, oldest first (those still stored). */
export async function getProfileVersions(store: ReadStore, uuid: string, upTo: number): Promise<DeviceProfileVersionView[]> {
  const docs = await store.getDocs(Array.from({ length: upTo }, (_, i) => versionKey(uuid, i + 1)));
  return docs.filter((d) => d !== null).map((d) => d as unknown as DeviceProfileVersionView);
}

/** One version of the profile with this uuid, or null. */
export async function getProfileVersion(store: ReadStore, uuid: string, version: number): Promise<DeviceProfileVersionView | null> {
  const [doc] = await store.getDocs([versionKey(uuid, version)]);
  return (doc as unknown as DeviceProfileVersionView | null) ?? null;
}
