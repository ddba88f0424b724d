/**
 * A host's device tree as it was, in the shapes the device-tree read model answers (DeviceView,
 * DeployableView, AttachHandleView), from the host's state folded by time travel. Each view keeps
 * the folded state (`past`), so the nested GraphQL fields of a past device (deployables, handles,
 * the ARQ holding a handle) are answered from the same point in time.
 */
import type { LastProgrammingView, ProgrammingView } from "../../projections/deployables/queries.js";
import type { AttachHandleView, DeployableView, DeviceView } from "../../projections/device-tree/queries.js";
import { attributeFields } from "../../projections/shared/deployables.js";
import { deviceView as deviceViewOf, handleView as handleViewOf } from "../../projections/shared/device-views.js";
import { findDeployable, type DeployableNode, type DeviceNode, type HandleNode, type HostState } from "../domain/inventory/state.js";
import type { PointInTime } from "./time-travel.js";

/** Where a past view comes from: the point in time and the host's state then. */
export interface Past {
  point: PointInTime;
  host: HostState;
}

/** What the GraphQL types show as `asOf`. */
export interface AsOfView {
  position: string;
  requested: string;
}

export const asOfView = (p: PointInTime): AsOfView => ({ position: p.position.toString(), requested: p.requested });

export type PastDevice = DeviceView & { past: Past; asOf: AsOfView };
export type PastDeployable = DeployableView & { past: Past };
export type PastHandle = AttachHandleView & { past: Past };

/** A view that came from the past (its nested fields must too). */
export const isPast = <T extends object>(v: T): v is T & { past: Past } => "past" in v && (v as { past?: unknown }).past !== undefined;

/** The host's devices, in the order they were discovered (the read model's order). */
export function devicesOf(past: Past): PastDevice[] {
  return [...past.host.devices.values()].map((d) => deviceView(past, d));
}

export function deviceView(past: Past, d: DeviceNode): PastDevice {
  return { ...deviceViewOf(past.host.hostname!, d), past, asOf: asOfView(past.point) };
}

/** A device's deployables, in the order they were added. */
export function deployablesOf(device: Pick<DeviceView, "uuid"> & { past: Past }): PastDeployable[] {
  const node = device.past.host.devices.get(device.uuid);
  return node ? [...node.deployables.values()].map((d) => deployableView(device.past, node, d)) : [];
}

export function deployable(past: Past, uuid: string | null): PastDeployable | null {
  const found = uuid ? findDeployable(past.host, uuid) : undefined;
  return found ? deployableView(past, found.device, found.deployable) : null;
}

export function childrenOf(d: PastDeployable): PastDeployable[] {
  const node = d.past.host.devices.get(d.deviceUuid);
  return node ? [...node.deployables.values()].filter((c) => c.parentUuid === d.uuid).map((c) => deployableView(d.past, node, c)) : [];
}

export function deviceOf(d: PastDeployable): PastDevice | null {
  const node = d.past.host.devices.get(d.deviceUuid);
  return node ? deviceView(d.past, node) : null;
}

export function handlesOf(d: PastDeployable): PastHandle[] {
  const found = findDeployable(d.past.host, d.uuid);
  return found ? [...found.deployable.handles.values()].map((h) => handleView(d.past, found.device, found.deployable, h)) : [];
}

/** The region's programming request in flight then, as the deployables read model shows it. */
export function programmingOf(d: PastDeployable): ProgrammingView | null {
  const p = findDeployable(d.past.host, d.uuid)?.deployable.programming;
  if (!p) return null;
  const b = p.bitstream;
  return { requestId: p.requestId, bitstreamId: b.id, bitstreamName: b.name, checksum: b.checksum, functionId: b.functionId, requestedBy: p.requestedBy, requestedAt: p.requestedAt };
}

/** How the region's last programming request had ended then. */
export function lastProgrammingOf(d: PastDeployable): LastProgrammingView | null {
  const last = findDeployable(d.past.host, d.uuid)?.deployable.lastProgramming;
  if (!last) return null;
  const outcome = last.outcome === "programmed" ? "PROGRAMMED" : last.outcome === "failed" ? "FAILED" : "ABANDONED";
  return { requestId: last.requestId, bitstreamId: last.bitstream.id, outcome, ...last.report };
}

function deployableView(past: Past, device: DeviceNode, d: DeployableNode): PastDeployable {
  const attributes = [...d.attributes].map(([key, a]) => ({ uuid: a.uuid, key, value: a.value, parentUuid: a.parentUuid }));
  return {
    uuid: d.uuid,
    name: d.name,
    numAccelerators: d.numAccelerators,
    driverName: d.driverName,
    rpUuid: d.rpUuid,
    bitstreamId: d.bitstreamId,
    parentUuid: d.parentUuid,
    rootUuid: d.rootUuid,
    deviceUuid: device.uuid,
    hostname: past.host.hostname!,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    ...attributeFields(attributes),
    past,
  };
}

function handleView(past: Past, device: DeviceNode, d: DeployableNode, h: HandleNode): PastHandle {
  return { ...handleViewOf({ hostname: past.host.hostname!, deviceUuid: device.uuid, deployableUuid: d.uuid }, h), past };
}
