/**
 * A device's capacities in Debian's real Placement: an SR-IOV NIC's provider has its VFs and its
 * port's bandwidth as two inventories, so a granular request for a VF and an amount of bandwidth
 * (as Neutron's minimum-bandwidth ports make) finds both on it; a changed total is written, a
 * tainted device reserves the bandwidth as it does the VFs. Checked through Placement's own API.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import type { PlacementSync } from "../../src/reactors/placement/sync.js";
import { placementApi, startPlacementServer, type PlacementServer } from "../support/placement.js";
import { novaComputeNode, startSync } from "./support.js";

let server: PlacementServer;
let api: ReturnType<typeof placementApi>;
const syncs: PlacementSync[] = [];
beforeAll(async () => {
  server = await startPlacementServer();
  api = placementApi(server);
});
afterAll(async () => {
  await server?.destroy();
});
afterEach(async () => {
  for (const s of syncs.splice(0)) await s.stop();
});

const BW = "NET_BW_EGR_KILOBIT_PER_SEC";
const nic = (host: string, kbps: number): DriverDevice => ({
  type: "NIC",
  vendor: "0x8086",
  model: "E810",
  controlPath: { type: "PCI", info: { domain: "0000", bus: "3b", device: "00", function: "0" } },
  capacities: [{ name: "bandwidth", resourceClass: BW, total: kbps, unit: "kbit/s" }],
  deployables: [
    {
      name: `${host}_0000:3b:00.0`,
      numAccelerators: 4,
      driverName: "pci",
      attributes: [{ key: "rc", value: "SRIOV_NET_VF" }],
      attachHandles: Array.from({ length: 4 }, (_, i) => ({ type: "PCI" as const, info: { domain: "0000", bus: "3b", device: "02", function: String(i) } })),
    },
  ],
});

type Inventories = { inventories: Record<string, { total: number; reserved: number; max_unit: number }> };
type Candidates = { allocation_requests: Array<{ allocations: Record<string, { resources: Record<string, number> }> }> };
/** A VF with this much bandwidth from one provider, as a granular request group. */
const candidates = (kbps: number) => api.get<Candidates>(`/allocation_candidates?resources1=SRIOV_NET_VF:1,${BW}:${kbps}&group_policy=none`);

describe("capacities in Placement (real Placement)", () => {
  it("puts a NIC's bandwidth beside its VFs on one provider, and keeps it true", async () => {
    await novaComputeNode(server, "n1");
    const { sync, hosts } = await startSync(server);
    syncs.push(sync);
    const rp = rpUuidFor("n1_0000:3b:00.0");
    await hosts.report("n1", [nic("n1", 25_000_000)]);
    await sync.caughtUp(20_000);
    const { inventories } = await api.get<Inventories>(`/resource_providers/${rp}/inventories`);
    expect(inventories["SRIOV_NET_VF"]).toMatchObject({ total: 4, reserved: 0 });
    expect(inventories[BW]).toMatchObject({ total: 25_000_000, reserved: 0, max_unit: 25_000_000 });

    const found = await candidates(10_000_000);
    expect(found.allocation_requests).toHaveLength(1);
    expect(found.allocation_requests[0]!.allocations[rp]!.resources).toEqual({ SRIOV_NET_VF: 1, [BW]: 10_000_000 });
    expect((await candidates(30_000_000)).allocation_requests).toHaveLength(0);

    // The link is renegotiated at 10 Gbit/s: Placement follows.
    await hosts.report("n1", [nic("n1", 10_000_000)]);
    await sync.caughtUp(20_000);
    expect((await api.get<Inventories>(`/resource_providers/${rp}/inventories`)).inventories[BW]).toMatchObject({ total: 10_000_000, reserved: 0 });
    expect((await candidates(10_000_001)).allocation_requests).toHaveLength(0);

    // A tainted device takes no new work: its bandwidth is reserved with its VFs.
    await hosts.taint("n1", await hosts.deviceAt("n1", "3b"), "example.com/burn-in", "NoSchedule");
    await sync.caughtUp(20_000);
    const tainted = (await api.get<Inventories>(`/resource_providers/${rp}/inventories`)).inventories;
    expect(tainted[BW]).toMatchObject({ total: 10_000_000, reserved: 10_000_000 });
    expect(tainted["SRIOV_NET_VF"]).toMatchObject({ total: 4, reserved: 4 });
    expect((await candidates(1)).allocation_requests).toHaveLength(0);
  });
});
