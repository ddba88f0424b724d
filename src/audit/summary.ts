/**
 * One line a person can read for each event: what happened, to what, where, and by whom
 * ("ARQ 5f… bound to instance 9c… on compute1 (attach handle 7a…, PCI 0000:0c:00.1) by nova (service)").
 * One entry per domain event type, so a new event type does not compile until it can be told.
 */
import type { DomainEvent } from "../domain/events.js";
import { taintLabel } from "../domain/inventory/taints.js";
import type { DeviceTopology } from "../domain/inventory/topology-report.js";
import { CHECKPOINT_TYPE as CHAIN_CHECKPOINTED } from "../infra/eventstore/esdb-chain.js";
import type { RecordedEvent } from "../infra/eventstore/port.js";
import { FOLLOWER_CHECKPOINTED, type FollowerCheckpointed } from "../reactors/follower/event-log-checkpoint.js";

type DataOf<T extends DomainEvent["type"]> = Extract<DomainEvent, { type: T }>["data"];
type Tellers = { [T in DomainEvent["type"]]: (d: DataOf<T>) => string };

const n = (count: number, what: string) => `${count} ${what}${count === 1 ? "" : "s"}`;
const list = (ids: readonly string[]) => ids.join(", ");
const changed = (changes: object) => Object.keys(changes).join(", ") || "nothing";

/** A PCI address as lspci shows it; other attach info as JSON. */
function address(info: unknown): string {
  const a = info as { domain?: string; bus?: string; device?: string; function?: string };
  return a && a.bus !== undefined ? `${a.domain ?? "0000"}:${a.bus}:${a.device}.${a.function}` : JSON.stringify(info);
}

function topologyLabel(t: DeviceTopology): string {
  const parts = [`NUMA node ${t.numaNode ?? "none"}`, `root port ${t.pcieRoot ?? "unknown"}`, `switch ${t.pcieSwitch ?? "none"}`, `link domain ${t.linkDomain ?? "none"}`];
  return parts.join(", ");
}

const TELL: Tellers = {
  HostBooksClosed: (d) => `the books of ${d.hostname} closed: its state summarised at revision ${d.revision}, where its next period begins`,
  HostReportSettled: (d) => `the report of ${d.hostname} (digest ${d.digest.slice(0, 15)}…) is its inventory now: its agent may confirm it by digest`,
  DeviceDiscovered: (d) => `device ${d.deviceUuid} (${d.type} ${d.vendor} ${d.model}, ${d.controlPath.type} ${address(d.controlPath.info)}) discovered on ${d.hostname}`,
  DeviceChanged: (d) => `device ${d.deviceUuid} on ${d.hostname} changed (${changed(d.changes)})`,
  DeviceStatusChanged: (d) => `device ${d.deviceUuid} on ${d.hostname} set to ${d.status}`,
  DeviceHealthChanged: (d) =>
    `device ${d.deviceUuid} on ${d.hostname} reported ${d.health.status}` + (d.health.reasons.length > 0 ? ` (${d.health.reasons.map((r) => r.code).join(", ")})` : ""),
  DeviceTopologyChanged: (d) => `device ${d.deviceUuid} on ${d.hostname} sits at ${topologyLabel(d.topology)}`,
  DeviceCapacitiesChanged: (d) =>
    d.capacities.length === 0
      ? `device ${d.deviceUuid} on ${d.hostname} no longer reports capacities`
      : `device ${d.deviceUuid} on ${d.hostname} offers ${d.capacities.map((c) => `${c.total} ${c.unit} of ${c.name} (${c.resourceClass})`).join(", ")}`,
  DeviceTainted: (d) => `device ${d.deviceUuid} on ${d.hostname} tainted ${taintLabel(d.taint)} by ${d.taint.by}: ${d.taint.reason}`,
  DeviceUntainted: (d) => `taint ${taintLabel(d)} removed from device ${d.deviceUuid} on ${d.hostname} by ${d.by}${d.reason ? `: ${d.reason}` : ""}`,
  DeviceLost: (d) => `device ${d.deviceUuid} left ${d.hostname}'s report while held by ARQ ${list(d.arqUuids)}: kept, marked lost, until released`,
  DeviceRemoved: (d) => `device ${d.deviceUuid} removed from ${d.hostname}`,
  DeviceCleaningRequirementSet: (d) => `device ${d.deviceUuid} on ${d.hostname} ${d.required ? "requires" : "no longer requires"} a clean after each use (by ${d.by})`,
  DevicePartitioningChanged: (d) =>
    d.partitioning === null
      ? `device ${d.deviceUuid} on ${d.hostname} is no longer partitioned`
      : `device ${d.deviceUuid} on ${d.hostname} makes ${d.partitioning.profiles.map((p) => p.name).join(", ")}; ${d.partitioning.partitions.length} partition(s) exist`,
  PartitionInventoryChanged: (d) => `device ${d.deviceUuid} on ${d.hostname} can hold ${d.available.map((a) => `${a.available} ${a.profile}`).join(", ")}`,
  PartitionCreationRequested: (d) => `partition ${d.profile} to be made on device ${d.deviceUuid} on ${d.hostname}${d.placement ? ` at slot ${d.placement.start}` : ""} for ARQ ${d.arqUuid} (request ${d.requestId})`,
  PartitionCreated: (d) => `partition ${d.partition.profile} ${d.partition.uuid} made on device ${d.deviceUuid} on ${d.hostname} in ${d.durationMs} ms for ARQ ${d.arqUuid}: ${d.command.join(" ")}`,
  PartitionCreationFailed: (d) => `partition for ARQ ${d.arqUuid} could not be made on device ${d.deviceUuid} on ${d.hostname} (request ${d.requestId}): ${d.reason}`,
  PartitionCreationAbandoned: (d) => `partition for ARQ ${d.arqUuid} on device ${d.deviceUuid} on ${d.hostname} no longer wanted (request ${d.requestId}): ${d.reason}`,
  PartitionDestructionRequested: (d) => `partition ${d.uuid} on device ${d.deviceUuid} on ${d.hostname} to be destroyed (request ${d.requestId})`,
  PartitionDestroyed: (d) => `partition ${d.uuid} on device ${d.deviceUuid} on ${d.hostname} destroyed in ${d.durationMs} ms: ${d.command.join(" ")}`,
  PartitionDestructionFailed: (d) => `partition ${d.uuid} on device ${d.deviceUuid} on ${d.hostname} could not be destroyed, and is kept free (request ${d.requestId}): ${d.reason}`,
  DeviceCleaningRequested: (d) => `device ${d.deviceUuid} on ${d.hostname} to be cleaned (request ${d.requestId}): ${d.reason}`,
  DeviceCleaned: (d) => `device ${d.deviceUuid} on ${d.hostname} cleaned in ${d.durationMs} ms (request ${d.requestId}, digest ${d.digest}): ${d.command.join(" ")}`,
  DeviceCleaningFailed: (d) => `cleaning device ${d.deviceUuid} on ${d.hostname} failed (request ${d.requestId}): ${d.reason}`,
  DeviceQualified: (d) => `device ${d.deviceUuid} on ${d.hostname} qualified again: offered to new binds`,
  DeviceFailed: (d) => `device ${d.deviceUuid} on ${d.hostname} FAILED: ${d.reason}`,
  DeployableAdded: (d) => `deployable ${d.name} (${d.deployableUuid}, ${n(d.numAccelerators, "accelerator")}) added to device ${d.deviceUuid} on ${d.hostname}`,
  DeployableChanged: (d) => `deployable ${d.deployableUuid} on ${d.hostname} changed (${changed(d.changes)})`,
  DeployableRemoved: (d) => `deployable ${d.deployableUuid} removed from device ${d.deviceUuid} on ${d.hostname}`,
  AttributeSet: (d) => `attribute ${d.key}=${d.value} set on deployable ${d.deployableUuid} on ${d.hostname}`,
  AttributeRemoved: (d) => `attribute ${d.key} removed from deployable ${d.deployableUuid} on ${d.hostname}`,
  AttachHandleAdded: (d) => `attach handle ${d.handleUuid} (${d.handleType} ${address(d.info)}) added to deployable ${d.deployableUuid} on ${d.hostname}`,
  AttachHandleChanged: (d) => `attach handle ${d.handleUuid} on ${d.hostname} is now ${d.handleType}`,
  AttachHandleLost: (d) => `attach handle ${d.handleUuid} left ${d.hostname}'s report while held by ARQ ${d.arqUuid}: kept, marked lost, until released`,
  AttachHandleRemoved: (d) => `attach handle ${d.handleUuid} removed from ${d.hostname}`,
  AttachHandleAllocated: (d) => `attach handle ${d.handleUuid} (${d.handleType} ${address(d.info)}) on ${d.hostname} allocated to ARQ ${d.arqUuid} for instance ${d.instanceUuid}`,
  AttachHandleReleased: (d) => `attach handle ${d.handleUuid} on ${d.hostname} released by ARQ ${d.arqUuid}`,
  ArqCreated: (d) => `ARQ ${d.arqUuid} created from device profile ${d.deviceProfileName} group ${d.deviceProfileGroupId} (project ${d.projectId ?? "none"})`,
  ArqBindStarted: (d) => `ARQ ${d.arqUuid}: bind to instance ${d.instanceUuid} on ${d.hostname} started`,
  ArqBound: (d) => `ARQ ${d.arqUuid} bound to instance ${d.instanceUuid} on ${d.hostname} (attach handle ${d.attachHandleUuid}, ${d.attachHandleType} ${address(d.attachHandleInfo)})`,
  ArqBindFailed: (d) => `ARQ ${d.arqUuid}: bind${d.instanceUuid ? ` to instance ${d.instanceUuid}` : ""} failed: ${d.reason}`,
  ArqUnbound: (d) =>
    `ARQ ${d.arqUuid} unbound${d.previousInstanceUuid ? ` from instance ${d.previousInstanceUuid}` : ""}${d.previousHostname ? ` on ${d.previousHostname}` : ""}${d.releasedHandleUuid ? `, releasing attach handle ${d.releasedHandleUuid}` : ""}`,
  ArqDeleted: (d) => `ARQ ${d.arqUuid} deleted${d.previousInstanceUuid ? ` (was bound to instance ${d.previousInstanceUuid} on ${d.previousHostname})` : ""}`,
  ArqEvictionRequested: (d) => `ARQ ${d.arqUuid} asked to leave device ${d.deviceUuid} on ${d.hostname} by ${d.deadline} (taint ${d.taintKey}): ${d.reason}`,
  InstanceArqsBound: (d) => `instance ${d.instanceUuid} takes ARQ ${list(d.arqUuids)}`,
  InstanceArqsReleased: (d) => `instance ${d.instanceUuid} lets go of ARQ ${list(d.arqUuids)}`,
  DeviceProfileCreated: (d) => `device profile ${d.name} (${d.uuid}) created with ${n(d.groups.length, "group")}`,
  DeviceProfileDeleted: (d) => `device profile ${d.name} (${d.uuid}) deleted`,
  DeviceProfileUpdated: (d) =>
    d.migration
      ? `device profile ${d.name} (${d.uuid}) migrated to version ${d.version} (${migrationSummary(d.migration)})`
      : `device profile ${d.name} (${d.uuid}) updated to version ${d.version} with ${n(d.groups.length, "group")}`,
  DeviceProfileDisabled: (d) => `device profile ${d.name} (${d.uuid}) disabled`,
  DeviceProfileEnabled: (d) => `device profile ${d.name} (${d.uuid}) enabled`,
  DeviceProfileRenamed: (d) => `device profile ${d.name} (${d.uuid}) renamed to ${d.newName}`,
  DeviceProfileRenamedFrom: (d) => `device profile ${d.name} (${d.uuid}) is the former ${d.previousName}, version ${d.version}`,
  DeviceProfileArqsCreated: (d) => `device profile ${d.profileUuid} used by new ARQ ${list(d.arqUuids)}`,
  DeviceProfileArqsDeleted: (d) => `device profile ${d.profileUuid} no longer used by ARQ ${list(d.arqUuids)}`,
  DeviceProfileUuidClaimed: (d) => `uuid ${d.uuid} claimed for device profile ${d.name}`,
  DeviceProfileUuidReleased: (d) => `uuid ${d.uuid} released by device profile ${d.name}`,
  InstanceOperationRecorded: (d) => `instance ${d.instanceUuid}: operation ${d.operation} recorded (ARQs: ${d.effect})`,
  RegionProgrammingRequested: (d) =>
    `region ${d.deployableUuid} on ${d.hostname}: programming with bitstream ${d.bitstream.name} (${d.bitstream.id}) requested (request ${d.requestId}) ${
      d.requestedBy.kind === "bind" ? `for ARQ ${d.requestedBy.arqUuid} of instance ${d.requestedBy.instanceUuid}` : `by operator ${d.requestedBy.principal}`
    }`,
  RegionProgrammed: (d) =>
    `region ${d.deployableUuid} on ${d.hostname} programmed with bitstream ${d.bitstream.name} (${d.bitstream.id}) in ${d.durationMs} ms (request ${d.requestId}${d.late ? ", late: abandoned before" : ""})`,
  RegionProgrammingFailed: (d) => `region ${d.deployableUuid} on ${d.hostname}: programming with bitstream ${d.bitstreamId} failed: ${d.reason} (request ${d.requestId})`,
  RegionProgrammingAbandoned: (d) => `region ${d.deployableUuid} on ${d.hostname}: programming with bitstream ${d.bitstreamId} abandoned: ${d.reason} (request ${d.requestId})`,
  BitstreamAdded: (d) => `bitstream ${d.name} (${d.id}, ${d.checksum}, ${n(d.size, "byte")}) added to the catalogue`,
  BitstreamRemoved: (d) => `bitstream ${d.name} (${d.id}) removed from the catalogue`,
  IdempotencyKeyClaimed: (d) => `idempotency key ${d.keyHash.slice(0, 12)}… claimed for ${d.operation} (until ${d.expiresAt})`,
  IdempotentAnswerRecorded: (d) => `the answer under idempotency key ${d.keyHash.slice(0, 12)}… recorded (a retry gets it again)`,
  QuotaLimitsSet: (d) => `quota limits of project ${d.projectId} set: ${Object.entries(d.limits).map(([c, n]) => `${c}=${n ?? "default"}`).join(", ")}`,
  QuotaClaimed: (d) => `project ${d.projectId}'s quota claimed for ${d.claims.length} ARQ(s)`,
  QuotaReleased: (d) => `project ${d.projectId}'s quota released for ${d.arqUuids.length} ARQ(s)`,
  QuotaBackfilled: (d) => `project ${d.projectId}'s quota counted its ${d.claims.length} ARQ(s) made before it`,
};

/**
 * Events the service writes outside the domain's aggregates: a follower's checkpoint
 * (src/reactors/follower), and on EventStoreDB a checkpoint of the global hash chain (esdb-chain.ts).
 */
const OUTSIDE_THE_DOMAIN: Record<string, (stream: string, data: unknown) => string> = {
  [FOLLOWER_CHECKPOINTED]: (stream, d) => `${stream.slice("follower-".length)} follower checkpointed at position ${(d as FollowerCheckpointed["data"]).position}`,
  [CHAIN_CHECKPOINTED]: (_stream, d) => `global hash chain checkpointed at position ${(d as { position: string }).position}`,
};

/** Who acted, as the event records it: "nova (service)", "system:binder". */
export function actor(metadata: RecordedEvent["metadata"]): string {
  const roles = Array.isArray(metadata.roles) && metadata.roles.length > 0 ? ` (${metadata.roles.join(", ")})` : "";
  return `${metadata.principal}${roles}`;
}

/** "<what happened> by <who>". */
export function summarize(e: Pick<RecordedEvent, "type" | "data" | "metadata" | "stream">): string {
  const tell = (TELL as Record<string, ((d: unknown) => string) | undefined>)[e.type];
  let what: string;
  try {
    what = tell ? tell(e.data) : (OUTSIDE_THE_DOMAIN[e.type]?.(e.stream, e.data) ?? `${e.type} in ${e.stream}`);
  } catch {
    what = `${e.type} in ${e.stream}`;
  }
  return `${what} by ${actor(e.metadata)}`;
}

function migrationSummary(m: { traits: Record<string, string>; resourceClasses: Record<string, string> }): string {
  return [...Object.entries(m.traits), ...Object.entries(m.resourceClasses)].map(([from, to]) => `${from} -> ${to}`).join(", ");
}
