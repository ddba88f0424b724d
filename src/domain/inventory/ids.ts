/**
 * Deterministic ids of the inventory tree: uuid5 over a fixed namespace, so a report always yields
 * the same ids for the same hardware, across reports and replays, without a random source.
 * A deployable's resource provider is uuid3(NAMESPACE_DNS, name), as in Cyborg.
 */
import { v3, v5 } from "uuid";

/** uuid5(NAMESPACE_URL, "urn:cyborg-es:inventory"); never change it: every stored id derives from it. */
export const INVENTORY_NAMESPACE = "e603c82e-1614-5edc-9f66-46de65cbb50d";
export const NAMESPACE_DNS = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";

/** Hashing dominates a repeated report's diff; the same names always give the same ids, so remember them. */
const MEMO_LIMIT = 200_000;
const memo = new Map<string, string>();
function remembered(key: string, derive: () => string): string {
  let id = memo.get(key);
  if (id === undefined) {
    if (memo.size >= MEMO_LIMIT) memo.clear();
    id = derive();
    memo.set(key, id);
  }
  return id;
}
const v5id = (name: string) => remembered(name, () => v5(name, INVENTORY_NAMESPACE));

/** `cpidKey` is the canonical JSON of the control path's PCI address. */
export const deviceUuidFor = (hostname: string, cpidKey: string) => v5id(`device:${hostname}/${cpidKey}`);
export const controlPathUuidFor = (hostname: string, cpidKey: string) => v5id(`cpid:${hostname}/${cpidKey}`);
export const deployableUuidFor = (deviceUuid: string, name: string) => v5id(`deployable:${deviceUuid}/${name}`);
export const attributeUuidFor = (deployableUuid: string, key: string) => v5id(`attribute:${deployableUuid}/${key}`);
/** `infoKey` is the canonical JSON of the handle's attach_info. */
export const attachHandleUuidFor = (deployableUuid: string, infoKey: string) => v5id(`attachHandle:${deployableUuid}/${infoKey}`);
/** The `n`th cleaning request of a device (cleaning.ts): the same on every replay. */
export const cleaningRequestIdFor = (deviceUuid: string, n: number) => v5(`cleaning:${deviceUuid}/${n}`, INVENTORY_NAMESPACE);
/** The `n`th request to make or destroy one of a device's partitions (partition-allocation.ts): the same on every replay. */
export const partitionRequestIdFor = (deviceUuid: string, n: number) => v5(`partition:${deviceUuid}/${n}`, INVENTORY_NAMESPACE);
export const rpUuidFor = (deployableName: string) => remembered(`rp:${deployableName}`, () => v3(deployableName, NAMESPACE_DNS));
