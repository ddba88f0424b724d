/**
 * Device topology over the API: an agent's report carries it, Device.topology shows it, an
 * unchanged topology writes no event and still confirms by digest, a changed NUMA node writes one
 * DeviceTopologyChanged, and a bad topology is refused with the field named.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportDigest } from "../../src/domain/inventory/digest.js";
import { stream } from "../../src/domain/shared/types.js";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const REPORT = `mutation($hostname: String!, $devices: [DriverDeviceInput!]!) {
  reportHostInventory(hostname: $hostname, devices: $devices) { added updated unchanged digest } }`;
const DEVICES = `query { devices(filter: { hostname: "compute1" }) { nodes {
  uuid controlPath { info } topology { numaNode pcieRoot pcieSwitch linkDomain } } } }`;

const at = (numaNode: number | null) => ({ numaNode, pcieRoot: "0000:00:01.0", pcieSwitch: "0000:01:00.0", linkDomain: "nvlink:0000:03:00.0" });
const withTopology = (topology: unknown) => FAKE_HOST_DEVICES(1).map((d) => ({ ...d, topology }));

describe("Device.topology", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(() => t?.close());

  it("is null for a device reported without topology", async () => {
    await t.ok("agent", REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) });
    const [d] = (await t.ok("admin", DEVICES)).devices.nodes;
    expect(d.topology).toBeNull();
  });

  it("shows the reported topology, PCI addresses in lower case", async () => {
    const reported = { ...at(1), pcieRoot: "0000:00:1C.0" };
    expect((await t.ok("agent", REPORT, { hostname: "compute1", devices: withTopology(reported) })).reportHostInventory).toMatchObject({ updated: 1 });
    const [d] = (await t.ok("admin", DEVICES)).devices.nodes;
    expect(d.topology).toEqual({ ...at(1), pcieRoot: "0000:00:1c.0" });
  });

  it("costs nothing while it holds, and a changed NUMA node writes one event", async () => {
    await t.ok("agent", REPORT, { hostname: "compute1", devices: withTopology(at(0)) });
    const head = await t.service.store.headPosition();
    expect((await t.ok("agent", op.CONFIRM, { hostname: "compute1", digest: reportDigest(withTopology(at(0))) })).confirmHostInventory).toMatchObject({ unchanged: 1 });
    expect((await t.ok("agent", REPORT, { hostname: "compute1", devices: withTopology(at(0)) })).reportHostInventory).toMatchObject({ updated: 0, unchanged: 1 });
    // Left out, the recorded topology stays as it is.
    expect((await t.ok("agent", REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) })).reportHostInventory).toMatchObject({ updated: 0 });
    expect(await t.service.store.headPosition()).toBe(head);

    await t.ok("agent", REPORT, { hostname: "compute1", devices: withTopology(at(1)) });
    const written = (await t.service.store.readStream(stream.host("compute1"))).filter((e) => e.position > head!).map((e) => e.type);
    expect(written).toEqual(["DeviceTopologyChanged", "HostReportSettled"]);
    const [d] = (await t.ok("admin", DEVICES)).devices.nodes;
    expect(d.topology.numaNode).toBe(1);
  });

  it("refuses a bad topology with the field named, and writes nothing", async () => {
    const head = await t.service.store.headPosition();
    const badNuma = await t.gql("agent", REPORT, { hostname: "compute1", devices: withTopology(at(-1)) });
    expect(badNuma.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "devices[0].topology.numaNode" });
    const badRoot = await t.gql("agent", REPORT, { hostname: "compute1", devices: withTopology({ ...at(0), pcieRoot: "pci0000:00" }) });
    expect(badRoot.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "devices[0].topology.pcieRoot" });
    expect(await t.service.store.headPosition()).toBe(head);
  });
});
