/**
 * A device's place in the health loop and who holds it, read from the read models the same way by
 * every front door (GraphQL's `Device.lifecycleState` and `Device.holders`, REST's `state` and
 * `holders` on /v2/devices): the state is the domain's rule (`lifecycleOf`) on the device's
 * taints, its cleaning and the attach handles its deployables have in use.
 */
import type { ArqEviction } from "../domain/arqs/arq.js";
import type { ArqView } from "../domain/arqs/view.js";
import { lifecycleOf, type DeviceLifecycleState } from "../domain/inventory/device-lifecycle.js";
import type { AttachHandleView, DeployableView, DeviceView } from "../../projections/device-tree/queries.js";

/** The batched reads the loop needs (the per-request `Loaders` are these). */
export interface DeviceLoopReads {
  deployablesOfDevice: { load(deviceUuid: string): Promise<DeployableView[]> };
  handlesOfDeployable: { load(deployableUuid: string): Promise<AttachHandleView[]> };
  arq: { load(arqUuid: string): Promise<ArqView | null> };
}

export interface DeviceHolderView {
  arqUuid: string;
  /** The instance the ARQ serves. */
  instanceUuid: string | null;
  /** When it took the handle (null for holders recorded before this was kept). */
  since: string | null;
  /** The notice to move it was given, if any. */
  eviction: ArqEviction | null;
}

/** The attach handles of the device's deployables that an ARQ holds. */
async function handlesInUse(device: DeviceView, reads: DeviceLoopReads): Promise<AttachHandleView[]> {
  const deployables = await reads.deployablesOfDevice.load(device.uuid);
  const handles = await Promise.all(deployables.map((d) => reads.handlesOfDeployable.load(d.uuid)));
  return handles.flat().filter((h) => h.inUse);
}

export async function deviceLifecycleState(device: DeviceView, reads: DeviceLoopReads): Promise<DeviceLifecycleState> {
  const holders = (await handlesInUse(device, reads)).length;
  const loop = { failed: Boolean(device.failure), cleaning: Boolean(device.cleaningInFlight), qualifying: Boolean(device.qualifyingSince) };
  return lifecycleOf({ taints: device.taints, holders, ...loop });
}

export async function deviceHolders(device: DeviceView, reads: DeviceLoopReads): Promise<DeviceHolderView[]> {
  const handles = (await handlesInUse(device, reads)).filter((h) => h.arqUuid);
  const arqs = await Promise.all(handles.map((h) => reads.arq.load(h.arqUuid!)));
  return handles.map((h, i) => ({ arqUuid: h.arqUuid!, instanceUuid: arqs[i]?.instanceUuid ?? null, since: h.heldSince ?? null, eviction: arqs[i]?.eviction ?? null }));
}
