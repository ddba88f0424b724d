/**
 * Attach-handle allocation on the host stream: the stream's revision serialises allocations, so
 * two ARQs never hold one handle. Allocation is idempotent per ARQ, release too.
 */
import { DomainError } from "../shared/types.js";
import { fold } from "../shared/decider.js";
import { cleaningHold } from "./cleaning.js";
import { removeDevice } from "./diff.js";
import type { InventoryEvent } from "./events.js";
import { evolveHost, findDeployable, type DeployableNode, type DeviceNode, type HostState } from "./state.js";
import { checkSchedulable, type Toleration } from "./taints.js";
import { checkTargetFits, type TargetRequirements } from "./target-fit.js";
import { abandonCreation, allocateOnPartitionedDevice, destroyAfterRelease } from "./partition-allocation.js";
import { awaitsPartition, profileOfDeployable } from "./partition-record.js";
import { withPartitionInventory } from "./partition-inventory.js";
import { drawsForBind } from "./capacity-draws.js";

export interface AllocateRequest {
  hostname: string;
  rpUuid: string;
  arqUuid: string;
  instanceUuid: string;
  at: string;
  /** What the ARQ's request group asks of the provider (target-fit.ts); a provider that does not fit is refused. */
  requirements?: TargetRequirements;
  /** The taints the ARQ's group tolerates (`accel:tolerations`); any other taint on the device refuses the bind. */
  tolerations?: readonly Toleration[];
  /**
   * The ARQ starts a new binding now: a handle the host still holds for it is a leftover of an
   * earlier binding (whose release may still be on its way, step by step on EventStoreDB), so it is
   * released and a handle allocated afresh. The host's stream moves, and a late release decided on
   * the older state is refused instead of freeing the handle of the new binding.
   */
  afresh?: boolean;
  /** The ARQ's profile group asks for the device to be cleaned once it leaves (accel:clean_after_use). */
  cleanAfterUse?: boolean;
}

export interface ReleaseRequest {
  hostname: string;
  arqUuid: string;
  at: string;
  /** PARTITION_KEEP_IDLE: a released partition stays made, free for the next ARQ of its profile, instead of being destroyed. */
  keepIdlePartitions?: boolean;
}

/**
 * The first free handle (in the order first reported) of the deployable whose RP is rpUuid, once
 * the provider is known to fit the request group (its class and traits) and to take new work (the
 * device is not lost and carries no taint the group does not tolerate).
 */
export function decideAllocate(state: HostState, req: AllocateRequest): InventoryEvent[] {
  return withPartitionInventory(state, allocateAfresh(state, req), req.hostname, req.at);
}

function allocateAfresh(state: HostState, req: AllocateRequest): InventoryEvent[] {
  const { hostname, arqUuid, at } = req;
  const leftover = state.allocations.has(arqUuid) || awaitsPartition(state, arqUuid);
  if (!req.afresh || !leftover) return decideAllocateOnce(state, req);
  const released = decideRelease(state, { hostname, arqUuid, at });
  return [...released, ...decideAllocateOnce(fold({ evolve: evolveHost }, state, released), req)];
}

function decideAllocateOnce(state: HostState, req: AllocateRequest): InventoryEvent[] {
  const { hostname, rpUuid, arqUuid, instanceUuid, at } = req;
  const held = state.allocations.get(arqUuid);
  if (held) {
    if (held.rpUuid === rpUuid && held.instanceUuid === instanceUuid) return [];
    throw new DomainError(
      "CONFLICT",
      `ARQ ${arqUuid} still holds attach handle ${held.handleUuid} (RP ${held.rpUuid}, instance ${held.instanceUuid}) on host ${hostname}`,
      "arqUuid",
    );
  }
  const found = findByRp(state, rpUuid);
  if (!found) throw new DomainError("NOT_FOUND", `No deployable with resource provider ${rpUuid} on host ${hostname}: pick one of the host's providers (resourceProviders(hostname: "${hostname}"), or hostWeights for the hosts that fit), or check that its agent still reports the device`, "deviceRpUuid");
  const { device, deployable } = found;
  if (req.requirements) checkTargetFits(deployable, hostname, req.requirements);
  if (device.lostArqs) throw new DomainError("CONFLICT", `Device ${device.uuid} on host ${hostname} is lost (no longer reported): bind to another provider; the device is released once its ARQs are unbound`, "deviceRpUuid");
  // Checked here, against the host stream's revision: a taint committed before this allocation
  // is always seen, so no bind lands on a tainted device after its taint.
  checkSchedulable(device, hostname, req.tolerations ?? []);
  const cleaning = cleaningHold(device);
  if (cleaning) throw new DomainError("CONFLICT", `${cleaning} (on host ${hostname})`, "deviceRpUuid");
  // A partition profile's provider never carries capacities, so a group with amounts is refused there.
  const draws = drawsForBind(state, device, deployable, hostname, req.requirements?.amounts);
  const profile = profileOfDeployable(device, deployable);
  if (profile) return allocateOnPartitionedDevice(device, deployable, profile, req);
  const handle = [...deployable.handles.values()].find((h) => !h.lost && !h.allocatedTo);
  if (!handle) {
    throw new DomainError("CONFLICT", `No free attach handle on deployable ${deployable.name} (RP ${rpUuid}) on host ${hostname}: every accelerator there is held; pick another provider (hostWeights ranks the hosts that still have one), or unbind ARQs that no longer need theirs`, "deviceRpUuid");
  }
  return [
    {
      type: "AttachHandleAllocated",
      data: {
        hostname,
        deviceUuid: device.uuid,
        deployableUuid: deployable.uuid,
        rpUuid,
        handleUuid: handle.uuid,
        handleType: handle.type,
        info: handle.info,
        arqUuid,
        instanceUuid,
        ...(req.cleanAfterUse ? { cleanAfterUse: true as const } : {}),
        ...(draws.length > 0 ? { draws } : {}),
        at,
      },
    },
  ];
}

/**
 * Frees the ARQ's handle, if it holds one. A lost handle is removed with it; a lost device is
 * removed (children first) when its last allocated handle is released.
 */
export function decideRelease(state: HostState, req: ReleaseRequest): InventoryEvent[] {
  return withPartitionInventory(state, releaseOnce(state, req), req.hostname, req.at);
}

function releaseOnce(state: HostState, req: ReleaseRequest): InventoryEvent[] {
  const { hostname, arqUuid, at } = req;
  const held = state.allocations.get(arqUuid);
  if (!held) return abandonCreation(state, hostname, arqUuid, "the ARQ was released before its partition was made", at);
  const events: InventoryEvent[] = [
    { type: "AttachHandleReleased", data: { hostname, deployableUuid: held.deployableUuid, handleUuid: held.handleUuid, arqUuid, at } },
  ];
  const handle = findDeployable(state, held.deployableUuid)?.deployable.handles.get(held.handleUuid);
  if (handle?.lost) {
    events.push({ type: "AttachHandleRemoved", data: { hostname, deployableUuid: held.deployableUuid, handleUuid: held.handleUuid, at } });
  }
  const after = fold({ evolve: evolveHost }, state, events);
  const device = after.devices.get(held.deviceUuid);
  if (device?.lostArqs && ![...after.allocations.values()].some((a) => a.deviceUuid === device.uuid)) {
    events.push(...removeDevice(hostname, device, at));
  } else if (device?.partitioning) {
    // A partition its holder may have left data in is never handed over idle: it is destroyed.
    const keepIdle = (req.keepIdlePartitions ?? false) && !held.cleanAfterUse && !device.cleaning.required;
    events.push(...destroyAfterRelease(after, hostname, held.deviceUuid, held.deployableUuid, held.handleUuid, keepIdle, at));
  }
  return events;
}

export function findByRp(state: HostState, rpUuid: string): { device: DeviceNode; deployable: DeployableNode } | undefined {
  for (const device of state.devices.values()) {
    for (const deployable of device.deployables.values()) if (deployable.rpUuid === rpUuid) return { device, deployable };
  }
  return undefined;
}
