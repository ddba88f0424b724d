/**
 * Which objects an event names, by event type: the devices, deployables, attach handles, ARQs,
 * instances and profiles whose history it belongs to. One entry per domain event type (the
 * compiler refuses a new event type until it says what the event touches).
 */
import type { DomainEvent } from "../../src/domain/events.js";
import { stream, streamPrefix } from "../../src/domain/shared/types.js";

/**
 * The streams an object owns: an event there is not indexed under that object (history reads
 * the stream itself), which spares a write for most events of the log (every ARQ event).
 */
export const OWN_STREAMS: ReadonlyArray<(uuid: string) => string> = [stream.arq, stream.instance, stream.deviceProfileUuid];
/** What those stream names start with, in the same order: none is the start of another. */
export const OWN_PREFIXES: readonly string[] = [streamPrefix.arq, streamPrefix.instance, streamPrefix.deviceProfileUuid];

type DataOf<T extends DomainEvent["type"]> = Extract<DomainEvent, { type: T }>["data"];
type Objects = { [T in DomainEvent["type"]]: (d: DataOf<T>) => ReadonlyArray<string | null> };

export const OBJECTS: Objects = {
  // Bookkeeping of the agent's report protocol: no object's history.
  HostReportSettled: () => [],
  // A summary of what the host's events already recorded (closing the books): it changes no object.
  HostBooksClosed: () => [],
  DeviceDiscovered: (d) => [d.deviceUuid],
  DeviceChanged: (d) => [d.deviceUuid],
  DeviceStatusChanged: (d) => [d.deviceUuid],
  DeviceHealthChanged: (d) => [d.deviceUuid],
  DeviceTopologyChanged: (d) => [d.deviceUuid],
  DeviceCapacitiesChanged: (d) => [d.deviceUuid],
  DeviceTainted: (d) => [d.deviceUuid],
  DeviceUntainted: (d) => [d.deviceUuid],
  DeviceLost: (d) => [d.deviceUuid, ...d.arqUuids],
  DeviceRemoved: (d) => [d.deviceUuid],
  DeviceCleaningRequirementSet: (d) => [d.deviceUuid],
  DeviceCleaningRequested: (d) => [d.deviceUuid],
  DeviceCleaned: (d) => [d.deviceUuid],
  DeviceCleaningFailed: (d) => [d.deviceUuid],
  DeviceQualified: (d) => [d.deviceUuid],
  DeviceFailed: (d) => [d.deviceUuid],
  DevicePartitioningChanged: (d) => [d.deviceUuid],
  PartitionInventoryChanged: (d) => [d.deviceUuid],
  PartitionCreationRequested: (d) => [d.deviceUuid, d.arqUuid],
  PartitionCreated: (d) => [d.deviceUuid, d.arqUuid],
  PartitionCreationFailed: (d) => [d.deviceUuid, d.arqUuid],
  PartitionCreationAbandoned: (d) => [d.deviceUuid, d.arqUuid],
  PartitionDestructionRequested: (d) => [d.deviceUuid],
  PartitionDestroyed: (d) => [d.deviceUuid],
  PartitionDestructionFailed: (d) => [d.deviceUuid],
  // A device's history takes in its parts' (partsOf): a deployable's events need not name it.
  DeployableAdded: (d) => [d.deployableUuid],
  DeployableChanged: (d) => [d.deployableUuid],
  DeployableRemoved: (d) => [d.deployableUuid],
  AttributeSet: (d) => [d.deployableUuid],
  AttributeRemoved: (d) => [d.deployableUuid],
  AttachHandleAdded: (d) => [d.handleUuid],
  AttachHandleChanged: (d) => [d.handleUuid],
  AttachHandleLost: (d) => [d.handleUuid, d.arqUuid],
  AttachHandleRemoved: (d) => [d.handleUuid],
  AttachHandleAllocated: (d) => [d.handleUuid, d.arqUuid, d.instanceUuid],
  AttachHandleReleased: (d) => [d.handleUuid, d.arqUuid],
  ArqCreated: (d) => [d.arqUuid, d.deviceProfileUuid],
  ArqBindStarted: (d) => [d.arqUuid, d.instanceUuid],
  ArqBound: (d) => [d.arqUuid, d.instanceUuid, d.attachHandleUuid],
  ArqBindFailed: (d) => [d.arqUuid, d.instanceUuid],
  ArqUnbound: (d) => [d.arqUuid, d.previousInstanceUuid, d.releasedHandleUuid],
  ArqDeleted: (d) => [d.arqUuid, d.deviceProfileUuid, d.previousInstanceUuid, d.releasedHandleUuid],
  ArqEvictionRequested: (d) => [d.arqUuid, d.deviceUuid],
  InstanceArqsBound: (d) => [d.instanceUuid, ...d.arqUuids],
  InstanceArqsReleased: (d) => [d.instanceUuid, ...d.arqUuids],
  DeviceProfileCreated: (d) => [d.uuid],
  DeviceProfileDeleted: (d) => [d.uuid],
  DeviceProfileUpdated: (d) => [d.uuid],
  DeviceProfileDisabled: (d) => [d.uuid],
  DeviceProfileEnabled: (d) => [d.uuid],
  DeviceProfileRenamed: (d) => [d.uuid],
  DeviceProfileRenamedFrom: (d) => [d.uuid],
  DeviceProfileArqsCreated: (d) => [d.profileUuid, ...d.arqUuids],
  DeviceProfileArqsDeleted: (d) => [d.profileUuid, ...d.arqUuids],
  DeviceProfileUuidClaimed: (d) => [d.uuid],
  DeviceProfileUuidReleased: (d) => [d.uuid],
  InstanceOperationRecorded: (d) => [d.instanceUuid],
  // A region's programming: the region, the request, the bitstream and the binds that wait for it.
  RegionProgrammingRequested: (d) => [d.deployableUuid, d.requestId, d.bitstream.id, ...(d.requestedBy.kind === "bind" ? [d.requestedBy.arqUuid, d.requestedBy.instanceUuid] : [])],
  RegionProgrammed: (d) => [d.deployableUuid, d.requestId, d.bitstream.id, ...d.arqUuids],
  RegionProgrammingFailed: (d) => [d.deployableUuid, d.requestId, d.bitstreamId, ...d.arqUuids],
  RegionProgrammingAbandoned: (d) => [d.deployableUuid, d.requestId, d.bitstreamId, ...d.arqUuids],
  BitstreamAdded: (d) => [d.id],
  BitstreamRemoved: (d) => [d.id],
  // A key names no object (its hash is no uuid): the request's trace shows it with what it covered.
  IdempotencyKeyClaimed: () => [],
  IdempotentAnswerRecorded: () => [],
  QuotaLimitsSet: () => [],
  QuotaClaimed: (d) => d.claims.map((c) => c.arqUuid),
  QuotaReleased: (d) => [...d.arqUuids],
  QuotaBackfilled: (d) => d.claims.map((c) => c.arqUuid),
};

/** The distinct objects an event names, but the one whose own stream holds it (none for an event type of no aggregate). */
export function objectsOf(e: { type: string; data: unknown; stream: string }): string[] {
  const of = (OBJECTS as Record<string, ((d: unknown) => ReadonlyArray<string | null>) | undefined>)[e.type];
  if (!of) return [];
  // The object whose own stream holds the event, if any: one slice, where building each id's
  // stream names to compare would cost three strings an id (this runs for every event of a replay).
  const prefix = OWN_PREFIXES.find((p) => e.stream.startsWith(p));
  const owner = prefix === undefined ? undefined : e.stream.slice(prefix.length);
  const out: string[] = [];
  for (const id of of(e.data)) if (id && id !== owner && !out.includes(id)) out.push(id);
  return out;
}

/**
 * The parts an event adds to an object: a device's deployables and attach handles, a
 * deployable's handles. A device's history is its own events and its parts'.
 */
export function partsOf(e: { type: string; data: unknown }): Array<[whole: string, part: string]> {
  switch (e.type) {
    case "DeployableAdded": {
      const d = e.data as DataOf<"DeployableAdded">;
      return [[d.deviceUuid, d.deployableUuid]];
    }
    case "AttachHandleAdded": {
      const d = e.data as DataOf<"AttachHandleAdded">;
      return [
        [d.deviceUuid, d.handleUuid],
        [d.deployableUuid, d.handleUuid],
      ];
    }
    default:
      return [];
  }
}
