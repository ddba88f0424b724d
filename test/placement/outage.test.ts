/**
 * Placement goes away in the middle of a burst of reports and comes back: the sync waits (its
 * status says why), then catches up: every provider is there with the right inventory and traits
 * (nothing skipped), and each was written exactly once (generation 2: created, inventory, traits;
 * nothing done twice), each compute node created once.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { fpgaCard } from "../../bench/lib/host-writer.js";
import { standaloneComputeNodeUuid } from "../../src/reactors/placement/host-sync.js";
import { placementApi, startPlacementServer, type PlacementServer } from "../support/placement.js";
import { recordingClient, startSync, treeOf } from "./support.js";

let server: PlacementServer;
beforeAll(async () => {
  server = await startPlacementServer();
});
afterAll(async () => {
  await server?.destroy();
});

const HOSTS = Array.from({ length: 12 }, (_, i) => `burst${i}`);
const BUSES = ["3b", "5e", "86", "af"];

it("waits while Placement is down in the middle of a burst, then catches up: nothing skipped, nothing done twice", { timeout: 120_000 }, async () => {
  const { client, requests } = recordingClient(server);
  const { sync, hosts } = await startSync(server, { client, config: { PLACEMENT_MISSING_COMPUTE_NODE: "create" } });
  try {
    await Promise.all(HOSTS.map((h) => hosts.report(h, BUSES.map((b, i) => fpgaCard(h, b, { accelerators: i + 1, traits: ["CUSTOM_BURST", `CUSTOM_BURST_${i}`] })))));

    await expect.poll(() => requests.writes().filter((r) => r.status < 300).length, { timeout: 20_000, interval: 5 }).toBeGreaterThan(30);
    await server.stop();
    await expect.poll(() => sync.status().state, { timeout: 20_000 }).toBe("retrying");
    expect(sync.status().error).toMatch(/Placement at http:\/\/127\.0\.0\.1:\d+ is unavailable/);
    expect(sync.status().lagEvents).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 500));

    await server.restart();
    await sync.caughtUp(60_000);
    expect(sync.status()).toMatchObject({ state: "live", lagEvents: 0, waitingHosts: 0, retries: 0 });

    const api = placementApi(server);
    for (const h of HOSTS) {
      const roots = await api.get<{ resource_providers: Array<{ uuid: string }> }>(`/resource_providers?name=${h}`);
      expect(roots.resource_providers.map((r) => r.uuid)).toEqual([standaloneComputeNodeUuid(h)]);
      const tree = await treeOf(server, standaloneComputeNodeUuid(h));
      expect(tree.map((p) => ({ name: p.name, generation: p.generation, fpga: p.inventories.FPGA?.total, reserved: p.inventories.FPGA?.reserved, traits: p.traits }))).toEqual(
        BUSES.map((b, i) => ({
          name: `${h}_0000:${b}:00.0`,
          generation: 2,
          fpga: i + 1,
          reserved: 0,
          traits: ["CUSTOM_BURST", `CUSTOM_BURST_${i}`, "OWNER_CYBORG"],
        })),
      );
    }
  } finally {
    await sync.stop();
  }
});
