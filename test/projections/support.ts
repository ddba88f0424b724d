/**
 * Given events, when the projections run, then the queries return this: helpers shared by the
 * projection tests and the runner tests. Events are built as the deciders emit them and appended
 * to a MemoryEventStore, one stream per aggregate.
 */
import { randomUUID } from "node:crypto";
import type { DomainEvent } from "../../src/domain/events.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventMetadata, EventStore } from "../../src/infra/eventstore/port.js";
import { projections } from "../../projections/index.js";
import * as arqs from "../../projections/arqs/queries.js";
import * as deployables from "../../projections/deployables/queries.js";
import * as profiles from "../../projections/device-profiles/queries.js";
import * as tree from "../../projections/device-tree/queries.js";
import * as rps from "../../projections/resource-providers/queries.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";

export const meta = (at = T(0)): EventMetadata => ({ principal: "test", correlationId: "c", causationId: "c", at });
export const T = (s: number) => new Date(Date.UTC(2026, 10, 22, 0, 0, s)).toISOString();

/** The stream an event belongs to, as the deciders choose it. */
export function streamOf(e: DomainEvent): string {
  const d = e.data as Record<string, string>;
  if (e.type.startsWith("Arq")) return stream.arq(d.arqUuid!);
  if (e.type.startsWith("DeviceProfileUuid")) return stream.deviceProfileUuid(d.uuid!);
  if (e.type.startsWith("DeviceProfile")) return stream.deviceProfile(d.name ?? d.profileName ?? "unknown");
  if (e.type.startsWith("Instance")) return stream.instance(d.instanceUuid!);
  return stream.host(d.hostname!);
}

export async function append(es: Pick<EventStore, "append">, events: readonly DomainEvent[]): Promise<void> {
  for (const e of events) await es.append(streamOf(e), [{ id: randomUUID(), type: e.type, data: e.data, metadata: meta() }], "any");
}

/** Appends the events, rebuilds every projection into a memory store, and returns its queries. */
export async function given(events: readonly DomainEvent[], store: ReadStore = new MemoryReadStore()) {
  const es = new MemoryEventStore();
  await append(es, events);
  const projector = new Projector({ events: es, store, projections, rebuildBatchSize: 7 });
  await projector.rebuild();
  return { read: queriesOf(store), store, es, projector };
}

/** Every read model's queries (projections/<model>/queries.ts), asked of one store. */
export function queriesOf(store: ReadStore) {
  return {
    getArqs: (uuids: readonly string[]) => arqs.getArqs(store, uuids),
    listArqs: (filter: arqs.ArqFilter, first: number, after?: string) => arqs.listArqs(store, filter, first, after),
    getDevices: (uuids: readonly string[]) => tree.getDevices(store, uuids),
    listDevices: (filter: tree.DeviceFilter, first: number, after?: string) => tree.listDevices(store, filter, first, after),
    getDeployables: (uuids: readonly string[]) => tree.getDeployables(store, uuids),
    deployablesByDevice: (uuids: readonly string[]) => tree.deployablesByDevice(store, uuids),
    childrenOf: (uuids: readonly string[]) => tree.childrenOf(store, uuids),
    handlesByDeployable: (uuids: readonly string[]) => tree.handlesByDeployable(store, uuids),
    getHandles: (uuids: readonly string[]) => tree.getHandles(store, uuids),
    listDeployables: (filter: deployables.DeployableFilter, first: number, after?: string) => deployables.listDeployables(store, filter, first, after),
    listProfiles: (names?: readonly string[]) => profiles.listProfiles(store, names),
    getProfileByName: (name: string) => profiles.getProfileByName(store, name),
    getProfilesByName: (names: readonly string[]) => profiles.getProfilesByName(store, names),
    getProfileByUuid: (uuid: string) => profiles.getProfileByUuid(store, uuid),
    listResourceProviders: (hostname?: string | null) => rps.listResourceProviders(store, hostname),
    fleetView: async () => {
      const hosts = (await rps.fleetFeed(store).current()).hosts();
      return { capacity: hosts.flatMap((h) => h.capacity), devices: hosts.flatMap((h) => h.devices) };
    },
  };
}

// ---- event builders (the fields the deciders fill) --------------------------------------------

const PCI = (bus: string) => ({ domain: "0000", bus, device: "00", function: "0" });

export function device(host: string, uuid: string, o: { type?: "GPU" | "FPGA" | "QAT"; vendor?: string; status?: "ENABLED" | "MAINTAINING"; bus?: string; at?: string } = {}): DomainEvent {
  return {
    type: "DeviceDiscovered",
    data: {
      hostname: host,
      deviceUuid: uuid,
      type: o.type ?? "GPU",
      vendor: o.vendor ?? "10de",
      model: "model-x",
      stdBoardInfo: { class: "0302" },
      vendorBoardInfo: null,
      controlPath: { uuid: `cp-${uuid}`, type: "PCI", info: PCI(o.bus ?? "af") },
      status: o.status ?? "ENABLED",
      at: o.at ?? T(1),
    },
  };
}

export function deployable(
  host: string,
  deviceUuid: string,
  uuid: string,
  o: { name?: string; num?: number; parent?: string | null; root?: string; rp?: string; at?: string } = {},
): DomainEvent {
  return {
    type: "DeployableAdded",
    data: {
      hostname: host,
      deviceUuid,
      deployableUuid: uuid,
      name: o.name ?? `${host}_${uuid}`,
      numAccelerators: o.num ?? 1,
      driverName: "drv",
      parentUuid: o.parent ?? null,
      rootUuid: o.root ?? uuid,
      rpUuid: o.rp ?? `rp-${uuid}`,
      bitstreamId: null,
      at: o.at ?? T(2),
    },
  };
}

export const attribute = (host: string, dep: string, uuid: string, key: string, value: string): DomainEvent => ({
  type: "AttributeSet",
  data: { hostname: host, deployableUuid: dep, attributeUuid: uuid, key, value, at: T(3) },
});

export const handle = (host: string, deviceUuid: string, dep: string, uuid: string, bus = "af"): DomainEvent => ({
  type: "AttachHandleAdded",
  data: { hostname: host, deviceUuid, deployableUuid: dep, handleUuid: uuid, handleType: "PCI", info: PCI(bus), at: T(4) },
});

export const allocated = (host: string, deviceUuid: string, dep: string, handleUuid: string, arqUuid: string, instanceUuid = "inst-1"): DomainEvent => ({
  type: "AttachHandleAllocated",
  data: { hostname: host, deviceUuid, deployableUuid: dep, rpUuid: `rp-${dep}`, handleUuid, handleType: "PCI", info: PCI("af"), arqUuid, instanceUuid, at: T(5) },
});

export const released = (host: string, dep: string, handleUuid: string, arqUuid: string): DomainEvent => ({
  type: "AttachHandleReleased",
  data: { hostname: host, deployableUuid: dep, handleUuid, arqUuid, at: T(6) },
});

/** A host with one GPU: device d1, deployable p1 (rc PGPU, two traits), handle h1. */
export function gpuHost(host = "h1", suffix = "1"): DomainEvent[] {
  const d = `d${suffix}`;
  const p = `p${suffix}`;
  return [
    device(host, d),
    deployable(host, d, p, { name: `${host}_0000:af:00.0` }),
    attribute(host, p, `a${suffix}-rc`, "rc", "PGPU"),
    attribute(host, p, `a${suffix}-t0`, "trait0", "CUSTOM_GPU_NVIDIA"),
    attribute(host, p, `a${suffix}-t1`, "trait1", "CUSTOM_GPU_PRODUCT_ID_1EB8"),
    handle(host, d, p, `h${suffix}`),
  ];
}

export const profileCreated = (name: string, uuid: string, groups: Record<string, string>[] = [{ "resources:PGPU": "1" }], at = T(0)): DomainEvent => ({
  type: "DeviceProfileCreated",
  data: { uuid, name, description: `${name} profile`, groups, createdAt: at },
});

export const profileDeleted = (name: string, uuid: string): DomainEvent => ({
  type: "DeviceProfileDeleted",
  data: { uuid, name, deletedAt: T(9) },
});

export const arqCreated = (uuid: string, o: { profile?: string; group?: number; project?: string | null; at?: string } = {}): DomainEvent => ({
  type: "ArqCreated",
  data: {
    arqUuid: uuid,
    deviceProfileName: o.profile ?? "gpu",
    deviceProfileUuid: "dp-1",
    deviceProfileGroupId: o.group ?? 0,
    group: { "resources:PGPU": "1" },
    projectId: o.project === undefined ? "proj-a" : o.project,
    at: o.at ?? T(10),
  },
});

export const bindStarted = (uuid: string, host = "h1", instance = "inst-1", rp = "rp-p1"): DomainEvent => ({
  type: "ArqBindStarted",
  data: { arqUuid: uuid, hostname: host, deviceRpUuid: rp, instanceUuid: instance, projectId: "proj-a", at: T(11) },
});

export const bound = (uuid: string, o: { host?: string; instance?: string; dep?: string; handle?: string } = {}): DomainEvent => ({
  type: "ArqBound",
  data: {
    arqUuid: uuid,
    hostname: o.host ?? "h1",
    instanceUuid: o.instance ?? "inst-1",
    deviceRpUuid: `rp-${o.dep ?? "p1"}`,
    deployableUuid: o.dep ?? "p1",
    attachHandleUuid: o.handle ?? "h1",
    attachHandleType: "PCI",
    attachHandleInfo: PCI("af"),
    at: T(12),
  },
});

export const bindFailed = (uuid: string, reason = "no free attach handle", instance: string | null = "inst-1"): DomainEvent => ({
  type: "ArqBindFailed",
  data: { arqUuid: uuid, instanceUuid: instance, reason, at: T(13) },
});

export const unbound = (uuid: string, o: { host?: string | null; instance?: string | null; handle?: string | null } = {}): DomainEvent => ({
  type: "ArqUnbound",
  data: {
    arqUuid: uuid,
    previousHostname: o.host === undefined ? "h1" : o.host,
    previousInstanceUuid: o.instance === undefined ? "inst-1" : o.instance,
    releasedHandleUuid: o.handle === undefined ? "h1" : o.handle,
    at: T(14),
  },
});

export const arqDeleted = (uuid: string, o: { host?: string | null; instance?: string | null } = {}): DomainEvent => ({
  type: "ArqDeleted",
  data: {
    arqUuid: uuid,
    deviceProfileName: "gpu",
    deviceProfileUuid: "dp-1",
    previousHostname: o.host ?? null,
    previousInstanceUuid: o.instance ?? null,
    releasedHandleUuid: null,
    at: T(15),
  },
});
