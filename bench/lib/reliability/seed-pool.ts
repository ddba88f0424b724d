/**
 * Gives a fresh service something to be attacked through: two hosts with fake FPGAs, two
 * profiles, ARQs in two projects (one bound), and collects their names, uuids, cursors and
 * positions into a Pool for the generators.
 */
import { randomUUID } from "node:crypto";
import { fakeHost } from "../fake-host.js";
import { emptyPool, type Pool } from "./hostile-values.js";
import { gql } from "./wire.js";

const REPORT = `mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { revision } }`;
const PROFILE = `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`;
const CREATE = `mutation($n: String!) { createAcceleratorRequests(deviceProfileName: $n) { uuid } }`;
const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;

export async function seedPool(url: string): Promise<Pool> {
  const pool = emptyPool();
  pool.hostnames = ["compute1", "compute2"];
  await gql(url, "agent", REPORT, { h: "compute1", d: fakeHost("compute1", 8) });
  await gql(url, "admin", REPORT, { h: "compute2", d: fakeHost("compute2", 4) });
  for (const name of ["fpga-1", "fpga-2"]) {
    const p = await gql(url, "admin", PROFILE, { p: { name, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] } });
    pool.profileNames.push(name);
    pool.profileUuids.push(p.createDeviceProfile.uuid);
  }
  for (const who of ["member", "member2", "service", "service"] as const) {
    const r = await gql(url, who, CREATE, { n: "fpga-1" });
    pool.arqUuids.push(...r.createAcceleratorRequests.map((a: { uuid: string }) => a.uuid));
  }
  const rps = (await gql(url, "admin", `{ resourceProviders { uuid name } }`)).resourceProviders as Array<{ uuid: string; name: string }>;
  pool.rpUuids = rps.map((r) => r.uuid);
  const instance = randomUUID();
  pool.instanceUuids = [instance, randomUUID()];
  const rp = rps.find((r) => r.name.startsWith("compute1"))?.uuid ?? rps[0]!.uuid;
  await gql(url, "service", BIND, { b: [{ arqUuid: pool.arqUuids.at(-1), hostname: "compute1", deviceRpUuid: rp, instanceUuid: instance }] });

  const devices = await gql(url, "admin", `{ devices(first: 1) { pageInfo { endCursor } nodes { uuid deployables { uuid attributes { uuid } } } } }`);
  const all = await gql(url, "admin", `{ devices { nodes { uuid deployables { uuid attributes { uuid } } } } }`);
  for (const d of all.devices.nodes) {
    pool.deviceUuids.push(d.uuid);
    for (const dep of d.deployables) {
      pool.deployableUuids.push(dep.uuid);
      pool.attributeUuids.push(...dep.attributes.map((a: { uuid: string }) => a.uuid));
    }
  }
  const arqs = await gql(url, "admin", `{ acceleratorRequests(first: 1) { pageInfo { endCursor } } deployables(first: 1) { pageInfo { endCursor } } }`);
  const events = await gql(url, "admin", `{ events(first: 2) { pageInfo { endCursor } edges { cursor } } }`);
  pool.cursors = [devices.devices.pageInfo.endCursor, arqs.acceleratorRequests.pageInfo.endCursor, arqs.deployables.pageInfo.endCursor].filter(Boolean);
  pool.positions = [events.events.pageInfo.endCursor, ...events.events.edges.map((e: { cursor: string }) => e.cursor)].filter(Boolean);
  pool.anyUuids = [...pool.arqUuids, ...pool.deviceUuids, ...pool.deployableUuids, ...pool.profileUuids, ...pool.rpUuids];
  pool.streams = ["host-compute1", "deviceProfile-fpga-1", `arq-${pool.arqUuids[0]}`, `instance-${instance}`, "$all", "arq-", "host-"];
  return pool;
}
