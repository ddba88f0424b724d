/**
 * Partitioned devices in Debian's real Placement: one child provider per partition profile, whose
 * capacity (total - reserved) is how many of the profile the device can hold now, so the
 * scheduler's allocation candidates never offer a partition that cannot be made. Checked through
 * Placement's own API after each allocation, creation and release.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { H100_PROFILES } from "../../src/clients/agent/drivers/fake-mig.js";
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

const GPU = "0000:40:00.0";
const gpu: DriverDevice = {
  type: "GPU",
  vendor: "10de",
  model: "H100 80GB HBM3",
  controlPath: { type: "PCI", info: { domain: "0000", bus: "40", device: "00", function: "0" } },
  partitioning: { driverName: "fake_mig", counters: [{ name: "compute", total: 7 }], slots: 8, oneProfileAtATime: false, profiles: [...H100_PROFILES], partitions: [] },
  deployables: [],
};
const at = () => new Date().toISOString();

type Inventories = { inventories: Record<string, { total: number; reserved: number }> };
/** How many of each profile Placement offers on the host's GPU now (total - reserved). */
async function offered(host: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of H100_PROFILES) {
    const { inventories } = await api.get<Inventories>(`/resource_providers/${rpUuidFor(`${host}_${GPU}_${p.name}`)}/inventories`);
    const inv = inventories[p.resourceClass]!;
    out[p.name] = inv.total - inv.reserved;
  }
  return out;
}

type Candidates = { allocation_requests: Array<{ allocations: Record<string, unknown> }> };
const candidates = async (rc: string) => (await api.get<Candidates>(`/allocation_candidates?resources=${rc}:1`)).allocation_requests.length;

describe("partitioned devices in Placement (real Placement)", () => {
  it("offers what can be made now, after each bind, creation and release", async () => {
    await novaComputeNode(server, "p1");
    const { sync, hosts } = await startSync(server);
    syncs.push(sync);
    await hosts.report("p1", [gpu]);
    await sync.caughtUp(20_000);
    expect(await offered("p1")).toEqual({ "1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1 });

    // A 4g.40gb is reserved at once (its bind waits for the agent): the whole GPU is gone.
    const [requested] = await hosts.allocate("p1", rpUuidFor(`p1_${GPU}_4g.40gb`), "arq-1", "vm-1");
    expect(requested!.type).toBe("PartitionCreationRequested");
    await sync.caughtUp(20_000);
    expect(await offered("p1")).toEqual({ "1g.10gb": 3, "1g.20gb": 2, "2g.20gb": 1, "3g.40gb": 1, "4g.40gb": 1, "7g.80gb": 0 });
    expect(await candidates("CUSTOM_MIG_7G_80GB")).toBe(0);
    expect(await candidates("CUSTOM_MIG_3G_40GB")).toBe(1);

    // Made: nothing changes for the others; released: destroyed, and the GPU is whole again once the agent says so.
    const requestId = (requested!.data as { requestId: string }).requestId;
    const uuid = "MIG-2b1f6e0c-0000-4000-8000-000000000001";
    const partition = { profile: "4g.40gb", uuid, placement: { start: 0, size: 4 }, toolRef: { gpuInstanceId: 1 }, attachHandle: { type: "MIG", info: { uuid, gpu_bdf: GPU } } };
    await hosts.run("p1", { type: "ReportPartitionResult", data: { hostname: "p1", requestId, ok: true, partition, command: ["nvidia-smi", "mig", "-cgi", "5:0", "-C"], durationMs: 300, at: at() } });
    const released = await hosts.release("p1", "arq-1");
    const destroy = released.find((e) => e.type === "PartitionDestructionRequested")!;
    await sync.caughtUp(20_000);
    expect((await offered("p1"))["7g.80gb"]).toBe(0);
    await hosts.run("p1", { type: "ReportPartitionResult", data: { hostname: "p1", requestId: (destroy.data as { requestId: string }).requestId, ok: true, command: ["nvidia-smi", "mig", "-dgi"], durationMs: 40, at: at() } });
    await sync.caughtUp(20_000);
    expect(await offered("p1")).toEqual({ "1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1 });
  });
});
