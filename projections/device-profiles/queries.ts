/** The device-profiles read model's queries: by name, by uuid, and all in creation order. */
import type { DeviceProfileView } from "../../src/domain/device-profiles/view.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { k, type StoredProfile } from "./projection.js";

const view = ({ position: _, ...profile }: StoredProfile): DeviceProfileView => profile;

/** All profiles, or those named (unknown names are left out), in creation order. */
export async function listProfiles(store: ReadStore, names?: readonly string[]): Promise<DeviceProfileView[]> {
  const wanted = names ? [...new Set(names)] : (await store.getMembers([k("all")]))[0]!;
  const docs = ((await store.getDocs(wanted.map((n) => k("profile", n)))) as Array<StoredProfile | null>).filter((d) => d !== null);
  if (names) docs.sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
  return docs.map(view);
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
