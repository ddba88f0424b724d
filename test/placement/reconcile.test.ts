/**
 * `cyborg-es placement reconcile` repairs drift made by hand in the real Placement: a changed
 * inventory, a removed trait, a deleted provider, Cyborg providers nobody wants (under a known
 * host and under a host the log never saw), and leaves other services' providers alone.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fpgaCard, HostWriter } from "../../bench/lib/host-writer.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { reconcilePlacement } from "../../src/reactors/placement/reconcile.js";
import { placementApi, startPlacementServer, type PlacementServer } from "../support/placement.js";
import { novaComputeNode, recordingClient, treeOf } from "./support.js";

let server: PlacementServer;
let api: ReturnType<typeof placementApi>;
beforeAll(async () => {
  server = await startPlacementServer();
  api = placementApi(server);
});
afterAll(async () => {
  await server?.destroy();
});

async function must(method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await api.call(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function generation(uuid: string): Promise<number> {
  return ((await must("GET", `/resource_providers/${uuid}`)) as { generation: number }).generation;
}

/** A provider as Cyborg would have made it (uuid3 of its name, OWNER_CYBORG), with an FPGA inventory. */
async function cyborgLike(name: string, parent: string): Promise<string> {
  const uuid = rpUuidFor(name);
  await must("POST", "/resource_providers", { name, uuid, parent_provider_uuid: parent });
  await must("PUT", `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: { FPGA: { total: 1 } } });
  await must("PUT", `/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits: ["OWNER_CYBORG"] });
  return uuid;
}

describe("placement reconcile (real Placement)", () => {
  it("repairs hand-made drift, says what it would do in a dry run, and then finds nothing to change", async () => {
    const store = new MemoryEventStore();
    const hosts = new HostWriter(store);
    const r1 = await novaComputeNode(server, "r1");
    const r2 = await novaComputeNode(server, "r2");
    await hosts.report("r1", [fpgaCard("r1", "5e", { accelerators: 2, traits: ["CUSTOM_R"] }), fpgaCard("r1", "af", { traits: ["CUSTOM_R"] })]);
    await hosts.report("r2", [fpgaCard("r2", "5e", { traits: ["CUSTOM_R"] })]);
    const { client } = recordingClient(server);
    const first = await reconcilePlacement({ store, client, missingComputeNode: "wait" });
    expect(first.changes.map((c) => `${c.action} ${c.name}`).sort()).toEqual([
      "create r1_0000:5e:00.0",
      "create r1_0000:af:00.0",
      "create r2_0000:5e:00.0",
      "set-inventory r1_0000:5e:00.0",
      "set-inventory r1_0000:af:00.0",
      "set-inventory r2_0000:5e:00.0",
      "set-traits r1_0000:5e:00.0",
      "set-traits r1_0000:af:00.0",
      "set-traits r2_0000:5e:00.0",
    ]);
    const before = { r1: await treeOf(server, r1), r2: await treeOf(server, r2) };

    // Drift by hand.
    const p5e = rpUuidFor("r1_0000:5e:00.0");
    const paf = rpUuidFor("r1_0000:af:00.0");
    await must("PUT", `/resource_providers/${p5e}/inventories`, { resource_provider_generation: await generation(p5e), inventories: { FPGA: { total: 7 } } });
    await must("PUT", `/resource_providers/${paf}/traits`, { resource_provider_generation: await generation(paf), traits: ["OWNER_CYBORG"] });
    await must("DELETE", `/resource_providers/${rpUuidFor("r2_0000:5e:00.0")}`);
    const strayUnderR1 = await cyborgLike("r1_0000:ff:00.0", r1);
    const gone = randomUUID();
    await must("POST", "/resource_providers", { name: "gone-host", uuid: gone });
    const goneFree = await cyborgLike("gone-host_0000:01:00.0", gone);
    const goneUsed = await cyborgLike("gone-host_0000:02:00.0", gone);
    await must("PUT", `/allocations/${randomUUID()}`, {
      allocations: { [goneUsed]: { resources: { FPGA: 1 } } },
      project_id: "p",
      user_id: "u",
      consumer_generation: null,
      consumer_type: "INSTANCE",
    });
    const novaOwn = randomUUID();
    await must("POST", "/resource_providers", { name: "r1_pci_0000_3b_00_0", uuid: novaOwn, parent_provider_uuid: r1 });

    const expected = [
      "delete gone-host_0000:01:00.0",
      "delete r1_0000:ff:00.0",
      "keep-in-use gone-host_0000:02:00.0",
      "set-inventory r1_0000:5e:00.0",
      "set-traits r1_0000:af:00.0",
      "create r2_0000:5e:00.0",
      "set-inventory r2_0000:5e:00.0",
      "set-traits r2_0000:5e:00.0",
    ].sort();

    const dry = await reconcilePlacement({ store, client, missingComputeNode: "wait", dryRun: true });
    expect(dry.changes.filter((c) => c.action !== "set-inventory" || c.name !== "r2_0000:5e:00.0").map((c) => `${c.action} ${c.name}`).sort()).toEqual(
      // A dry run reports a provider to create as one change.
      expected.filter((e) => !e.endsWith("r2_0000:5e:00.0") || e.startsWith("create")),
    );
    expect(dry.changes.find((c) => c.name === "r1_0000:5e:00.0")?.detail).toBe("FPGA total=7 reserved=0 max_unit=2147483647 -> FPGA total=2 reserved=0");
    expect(await generation(p5e)).toBe(3); // nothing written

    const progress: number[] = [];
    const fixed = await reconcilePlacement({ store, client, missingComputeNode: "wait", onProgress: (done) => progress.push(done) });
    expect(fixed.changes.map((c) => `${c.action} ${c.name}`).sort()).toEqual(expected);
    expect(fixed.waiting).toEqual([{ host: "gone-host", reason: expect.stringContaining("gone-host_0000:02:00.0") }]);
    expect(fixed.errors).toEqual([]);
    expect(progress).toEqual([1, 2, 3]);

    const strip = (t: Awaited<ReturnType<typeof treeOf>>) => t.map(({ generation: _, ...rest }) => rest);
    expect(strip(await treeOf(server, r2))).toEqual(strip(before.r2));
    const r1Tree = await treeOf(server, r1);
    expect(strip(r1Tree.filter((p) => p.uuid !== novaOwn))).toEqual(strip(before.r1));
    expect(r1Tree.some((p) => p.uuid === novaOwn)).toBe(true);
    expect(r1Tree.some((p) => p.uuid === strayUnderR1)).toBe(false);
    expect((await api.call("GET", `/resource_providers/${goneFree}`)).status).toBe(404);
    expect(((await must("GET", `/resource_providers/${goneUsed}/inventories`)) as { inventories: { FPGA: { reserved: number } } }).inventories.FPGA.reserved).toBe(1);

    const again = await reconcilePlacement({ store, client, missingComputeNode: "wait" });
    expect(again.changes).toEqual([]);
  });
});
