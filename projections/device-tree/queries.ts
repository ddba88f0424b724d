/** The device-tree read model's queries: devices, their deployables and attach handles. */
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { childrenOf as groupChildren, readDeployables, type DeployableView } from "../shared/deployables.js";
import { deviceViewOfDoc, type AttachHandleView, type DeviceView } from "../shared/device-views.js";
import { filterIndexes, pageOf, type Page } from "../shared/page.js";
import { hostsChangedSince as changedSince } from "../shared/changed-hosts.js";
import { DEVICE_FAMILIES, k } from "./projection.js";

export type { AttachHandleView, DeployableView, DeviceView };

export interface DeviceFilter {
  type?: string | null;
  vendor?: string | null;
  hostname?: string | null;
  status?: string | null;
}

export async function getDevices(store: ReadStore, uuids: readonly string[]): Promise<Array<DeviceView | null>> {
  const docs = await store.getDocs(uuids.map((u) => k("device", u)));
  return docs.map((doc) => (doc ? deviceViewOfDoc(doc) : null));
}

export async function listDevices(store: ReadStore, filter: DeviceFilter, first: number, after?: string): Promise<Page<DeviceView>> {
  const index = filterIndexes(k, DEVICE_FAMILIES, filter, ["hostname", "type", "vendor", "status"], "devices");
  return pageOf(store, index, first, after, (u) => getDevices(store, u));
}

export function getDeployables(store: ReadStore, uuids: readonly string[]): Promise<Array<DeployableView | null>> {
  return readDeployables(store, k, uuids);
}

export function deployablesByDevice(store: ReadStore, deviceUuids: readonly string[]): Promise<DeployableView[][]> {
  return groupChildren(store, deviceUuids.map((u) => k("deployables-of", u)), (u) => getDeployables(store, u));
}

export function childrenOf(store: ReadStore, deployableUuids: readonly string[]): Promise<DeployableView[][]> {
  return groupChildren(store, deployableUuids.map((u) => k("children-by-parent", u)), (u) => getDeployables(store, u));
}

export async function getHandles(store: ReadStore, uuids: readonly string[]): Promise<Array<AttachHandleView | null>> {
  return (await store.getDocs(uuids.map((u) => k("handle", u)))) as Array<AttachHandleView | null>;
}

export function handlesByDeployable(store: ReadStore, deployableUuids: readonly string[]): Promise<AttachHandleView[][]> {
  return groupChildren(store, deployableUuids.map((u) => k("handles-of", u)), (u) => getHandles(store, u));
}

/** Hosts whose devices changed at or after `position`. */
export function hostsChangedSince(store: ReadStore, position: bigint | undefined): Promise<string[]> {
  return changedSince(store, k, position);
}
