/**
 * The log bench:restart starts the service on: written into the embedded LMDB log through the
 * store's port (so every hash and chain checkpoint is the store's own), fast: the appends of one
 * step of a wave are issued together and share LMDB transactions (group commit).
 *
 * What it holds, as the service would have written it: one device profile; `hosts` hosts of 8
 * devices (4 GPUs, 4 FPGAs: device, deployable, attributes, attach handle); then ARQ flows in
 * waves of one ARQ a device: create (ArqCreated and the profile's DeviceProfileArqsCreated),
 * bind (ArqBindStarted, the host's AttachHandleAllocated, ArqBound, the instance's
 * InstanceArqsBound), unbind (ArqUnbound, AttachHandleReleased, InstanceArqsReleased) and delete
 * (ArqDeleted, DeviceProfileArqsDeleted): 11 events a flow. The last wave stays bound, so the
 * read models end with live ARQs as well as the inventory.
 */
import type { DomainEvent } from "../src/domain/events.js";
import { stream } from "../src/domain/shared/types.js";
import { newEventId } from "../src/app/event-ids.js";
import type { EventMetadata, EventStore } from "../src/infra/eventstore/port.js";

export interface LogShape {
  events: number;
  hosts: number;
}

const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
const DEVICES = 8;
const PROFILE = { name: "gpu", uuid: id(1, 1) };
/** Deterministic uuid-shaped ids (kind, number). */
function id(kind: number, n: number): string {
  return `${hex(kind, 8)}-0000-4000-8000-${hex(n, 12)}`;
}

interface Device {
  host: string;
  device: string;
  deployable: string;
  handle: string;
  rp: string;
  info: { domain: string; bus: string; device: string; function: string };
}

type Append = [stream: string, events: DomainEvent[]];

/** Appends the log; returns the number of events written (at least `shape.events`, rounded up to a whole step). */
export async function writeLog(store: EventStore, shape: LogShape, progress: (written: number) => void): Promise<number> {
  let at = Date.UTC(2026, 0, 1);
  let written = 0;
  const put = async (appends: Append[]) => {
    const metadata: EventMetadata = { principal: "bench", correlationId: newEventId(), causationId: newEventId(), at: new Date(at).toISOString() };
    await Promise.all(appends.map(([s, events]) => store.append(s, events.map((e) => ({ id: newEventId(), type: e.type, data: e.data, metadata })), "any")));
    written += appends.reduce((n, [, events]) => n + events.length, 0);
    at += 1000;
  };
  const when = () => new Date(at).toISOString();
  await put([[stream.deviceProfile(PROFILE.name), [{ type: "DeviceProfileCreated", data: { uuid: PROFILE.uuid, name: PROFILE.name, description: "bench", groups: [{ "resources:PGPU": "1" }], createdAt: when() } }]]]);
  const devices: Device[] = [];
  const hosts: Append[] = [];
  for (let h = 0; h < shape.hosts; h++) {
    const host = `compute-${String(h).padStart(5, "0")}`;
    const events: DomainEvent[] = [];
    for (let d = 0; d < DEVICES; d++) events.push(...inventory(devices, host, h * DEVICES + d, d, when()));
    hosts.push([stream.host(host), events]);
  }
  for (let i = 0; i < hosts.length; i += 500) await put(hosts.slice(i, i + 500));
  let flows = 0;
  for (let wave = 0; written < shape.events; wave++) {
    const last = written + devices.length * 11 >= shape.events;
    const arqs = devices.map((d, i) => ({ d, uuid: id(8, flows + i), instance: id(9, flows + i) }));
    flows += arqs.length;
    for (const step of flowSteps(last)) await inChunks(arqs.map((a) => step(a.d, a.uuid, a.instance, when())), put);
    progress(written);
    if (last) break; // every handle is held now
  }
  return written;
}

/** A step's appends, a few thousand at a time (one LMDB transaction holds what arrived together). */
async function inChunks(appends: Append[][], put: (a: Append[]) => Promise<void>): Promise<void> {
  const flat = appends.flat();
  for (let i = 0; i < flat.length; i += 4000) await put(flat.slice(i, i + 4000));
}

type Step = (d: Device, arq: string, instance: string, at: string) => Append[];

function flowSteps(keepBound: boolean): Step[] {
  const create: Step = (_d, arq, _i, at) => [
    [stream.arq(arq), [{ type: "ArqCreated", data: { arqUuid: arq, deviceProfileName: PROFILE.name, deviceProfileUuid: PROFILE.uuid, deviceProfileGroupId: 0, group: { "resources:PGPU": "1" }, projectId: "bench", at } }]],
    [stream.deviceProfile(PROFILE.name), [{ type: "DeviceProfileArqsCreated", data: { profileUuid: PROFILE.uuid, arqUuids: [arq] } }]],
  ];
  const bind: Step = (d, arq, instance, at) => [
    [stream.arq(arq), [{ type: "ArqBindStarted", data: { arqUuid: arq, hostname: d.host, deviceRpUuid: d.rp, instanceUuid: instance, projectId: "bench", at } }]],
    [
      stream.host(d.host),
      [{ type: "AttachHandleAllocated", data: { hostname: d.host, deviceUuid: d.device, deployableUuid: d.deployable, rpUuid: d.rp, handleUuid: d.handle, handleType: "PCI", info: d.info, arqUuid: arq, instanceUuid: instance, at } }],
    ],
    [
      stream.arq(arq),
      [{ type: "ArqBound", data: { arqUuid: arq, hostname: d.host, instanceUuid: instance, deviceRpUuid: d.rp, deployableUuid: d.deployable, attachHandleUuid: d.handle, attachHandleType: "PCI", attachHandleInfo: d.info, at } }],
    ],
    [stream.instance(instance), [{ type: "InstanceArqsBound", data: { instanceUuid: instance, arqUuids: [arq], at } }]],
  ];
  const unbind: Step = (d, arq, instance, at) => [
    [stream.arq(arq), [{ type: "ArqUnbound", data: { arqUuid: arq, previousHostname: d.host, previousInstanceUuid: instance, releasedHandleUuid: d.handle, at } }]],
    [stream.host(d.host), [{ type: "AttachHandleReleased", data: { hostname: d.host, deployableUuid: d.deployable, handleUuid: d.handle, arqUuid: arq, at } }]],
    [stream.instance(instance), [{ type: "InstanceArqsReleased", data: { instanceUuid: instance, arqUuids: [arq], at } }]],
  ];
  const remove: Step = (_d, arq, _i, at) => [
    [
      stream.arq(arq),
      [{ type: "ArqDeleted", data: { arqUuid: arq, deviceProfileName: PROFILE.name, deviceProfileUuid: PROFILE.uuid, previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at } }],
    ],
    [stream.deviceProfile(PROFILE.name), [{ type: "DeviceProfileArqsDeleted", data: { profileUuid: PROFILE.uuid, arqUuids: [arq] } }]],
  ];
  return keepBound ? [create, bind] : [create, bind, unbind, remove];
}

function inventory(devices: Device[], host: string, n: number, d: number, at: string): DomainEvent[] {
  const bus = hex(0x10 + d, 2);
  const info = { domain: "0000", bus, device: "00", function: "0" };
  const dev: Device = { host, device: id(2, n), deployable: id(3, n), handle: id(4, n), rp: id(6, n), info };
  devices.push(dev);
  const fpga = d % 2 === 1;
  const rc = fpga ? "FPGA" : "PGPU";
  return [
    {
      type: "DeviceDiscovered",
      data: {
        hostname: host,
        deviceUuid: dev.device,
        type: fpga ? "FPGA" : "GPU",
        vendor: fpga ? "8086" : "10de",
        model: fpga ? "PAC Arria10" : "A100",
        stdBoardInfo: { class: fpga ? "1200" : "0302", device_id: fpga ? "09c4" : "20b0" },
        vendorBoardInfo: null,
        controlPath: { uuid: id(5, n), type: "PCI", info },
        status: "ENABLED",
        at,
      },
    },
    {
      type: "DeployableAdded",
      data: { hostname: host, deviceUuid: dev.device, deployableUuid: dev.deployable, name: `${host}_0000:${bus}:00.0`, numAccelerators: 1, driverName: fpga ? "intel_fpga" : "nvidia_gpu", parentUuid: null, rootUuid: dev.deployable, rpUuid: dev.rp, bitstreamId: null, at },
    },
    { type: "AttributeSet", data: { hostname: host, deployableUuid: dev.deployable, attributeUuid: id(7, n * 2), key: "rc", value: rc, at } },
    { type: "AttributeSet", data: { hostname: host, deployableUuid: dev.deployable, attributeUuid: id(7, n * 2 + 1), key: "trait0", value: fpga ? "CUSTOM_FPGA_INTEL" : "CUSTOM_GPU_NVIDIA", at } },
    { type: "AttachHandleAdded", data: { hostname: host, deviceUuid: dev.device, deployableUuid: dev.deployable, handleUuid: dev.handle, handleType: "PCI", info, at } },
  ];
}
