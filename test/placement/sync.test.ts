/**
 * The Placement sync against Debian's real Placement, checked through Placement's own API (as the
 * scheduler and `openstack resource provider ...` read it). One Placement for the file; each test
 * has its own hosts and its own event log.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fpgaCard } from "../../bench/lib/host-writer.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { PlacementSync } from "../../src/reactors/placement/sync.js";
import { capturingLogger } from "../support/log-lines.js";
import { placementApi, startPlacementServer, type PlacementServer } from "../support/placement.js";
import { novaComputeNode, recordingClient, startSync, treeOf } from "./support.js";

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

/** A sync over its own memory stores, stopped after the test. */
async function started(o: Parameters<typeof startSync>[1] = {}) {
  const s = await startSync(server, o);
  syncs.push(s.sync);
  return s;
}

type Candidates = { allocation_requests: Array<{ allocations: Record<string, { resources: Record<string, number> }> }> };
/** The providers a scheduler's query would offer. */
async function candidates(query: string): Promise<string[]> {
  const body = await api.get<Candidates>(`/allocation_candidates?${query}`);
  return [...new Set(body.allocation_requests.flatMap((r) => Object.keys(r.allocations)))].sort();
}

const rp = (host: string, bus: string) => rpUuidFor(`${host}_0000:${bus}:00.0`);

describe("Placement sync (real Placement)", () => {
  it("represents a host's report: one child provider per deployable, inventory, traits created on demand; reprogramming swaps traits", async () => {
    const compute = await novaComputeNode(server, "c1");
    const { sync, hosts } = await started();
    await hosts.report("c1", [
      fpgaCard("c1", "5e", { accelerators: 2, traits: ["CUSTOM_T1_INTEL", "CUSTOM_T1_FUNCTION_GZIP"] }),
      fpgaCard("c1", "af", { traits: ["CUSTOM_T1_INTEL", "CUSTOM_T1_FUNCTION_AES"] }),
    ]);
    await sync.caughtUp(20_000);

    expect(await treeOf(server, compute)).toEqual([
      {
        uuid: rp("c1", "5e"),
        name: "c1_0000:5e:00.0",
        generation: 2,
        parent: compute,
        inventories: { FPGA: expect.objectContaining({ total: 2, reserved: 0, max_unit: 2, min_unit: 1, step_size: 1, allocation_ratio: 1 }) },
        traits: ["CUSTOM_T1_FUNCTION_GZIP", "CUSTOM_T1_INTEL", "OWNER_CYBORG"],
      },
      {
        uuid: rp("c1", "af"),
        name: "c1_0000:af:00.0",
        generation: 2,
        parent: compute,
        inventories: { FPGA: expect.objectContaining({ total: 1, reserved: 0, max_unit: 1 }) },
        traits: ["CUSTOM_T1_FUNCTION_AES", "CUSTOM_T1_INTEL", "OWNER_CYBORG"],
      },
    ]);

    // The scheduler's query finds exactly the providers with the trait.
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T1_FUNCTION_GZIP")).toEqual([rp("c1", "5e")]);
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T1_INTEL")).toEqual([rp("c1", "5e"), rp("c1", "af")].sort());
    expect(await candidates("resources=FPGA:2&required=CUSTOM_T1_INTEL")).toEqual([rp("c1", "5e")]);

    // Reprogrammed: the function trait is swapped, nothing else is written.
    await hosts.report("c1", [
      fpgaCard("c1", "5e", { accelerators: 2, traits: ["CUSTOM_T1_INTEL", "CUSTOM_T1_FUNCTION_ZSTD"] }),
      fpgaCard("c1", "af", { traits: ["CUSTOM_T1_INTEL", "CUSTOM_T1_FUNCTION_AES"] }),
    ]);
    await sync.caughtUp(20_000);
    const tree = await treeOf(server, compute);
    expect(tree[0]).toMatchObject({ generation: 3, traits: ["CUSTOM_T1_FUNCTION_ZSTD", "CUSTOM_T1_INTEL", "OWNER_CYBORG"] });
    expect(tree[1]).toMatchObject({ generation: 2 });
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T1_FUNCTION_GZIP")).toEqual([]);
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T1_FUNCTION_ZSTD")).toEqual([rp("c1", "5e")]);
    expect(sync.status()).toMatchObject({ state: "live", lagEvents: 0, waitingHosts: 0 });
  });

  it("never deletes a provider under a VM: claimed, bound, removed while allocated, kept reserved, deleted once released", async () => {
    const compute = await novaComputeNode(server, "c2");
    const { sync, hosts } = await started();
    await hosts.report("c2", [fpgaCard("c2", "5e", { accelerators: 2, traits: ["CUSTOM_T2_GZIP"] }), fpgaCard("c2", "af", { traits: ["CUSTOM_T2_AES"] })]);
    await sync.caughtUp(20_000);

    // The scheduler picks a candidate and claims it in Placement; the bind takes a handle on that provider.
    const [picked] = await candidates("resources=FPGA:1&required=CUSTOM_T2_GZIP");
    expect(picked).toBe(rp("c2", "5e"));
    const claim = await api.call("PUT", "/allocations/11111111-2222-3333-4444-555555555555", {
      allocations: { [picked!]: { resources: { FPGA: 1 } } },
      project_id: "p1",
      user_id: "u1",
      consumer_generation: null,
      consumer_type: "INSTANCE",
    });
    expect(claim.status).toBe(204);
    await hosts.allocate("c2", picked!, "arq-2", "11111111-2222-3333-4444-555555555555");

    // The card leaves the report while the VM uses it: kept, fully reserved, still allocated.
    await hosts.report("c2", [fpgaCard("c2", "af", { traits: ["CUSTOM_T2_AES"] })]);
    await sync.caughtUp(20_000);
    let tree = await treeOf(server, compute);
    expect(tree.map((p) => [p.name, p.inventories.FPGA?.reserved])).toEqual([["c2_0000:5e:00.0", 2], ["c2_0000:af:00.0", 0]]);
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T2_GZIP")).toEqual([]);

    // Our side releases (the device goes from the domain) before Nova deletes its allocation: still kept.
    await hosts.release("c2", "arq-2");
    await sync.caughtUp(20_000);
    tree = await treeOf(server, compute);
    expect(tree.map((p) => [p.name, p.inventories.FPGA?.reserved])).toEqual([["c2_0000:5e:00.0", 2], ["c2_0000:af:00.0", 0]]);
    expect(sync.status()).toMatchObject({ waitingHosts: 1, waiting: [{ host: "c2", reason: expect.stringMatching(/c2_0000:5e:00.0 .* has allocations/) }] });

    // Nova deletes the allocation; the next retry deletes the provider.
    expect((await api.call("DELETE", "/allocations/11111111-2222-3333-4444-555555555555")).status).toBe(204);
    await sync.retryWaiting();
    expect((await treeOf(server, compute)).map((p) => p.name)).toEqual(["c2_0000:af:00.0"]);
    expect(sync.status()).toMatchObject({ waitingHosts: 0 });
  });

  it("reserves a device in maintenance, and frees it again", async () => {
    const compute = await novaComputeNode(server, "c3");
    const { sync, hosts } = await started();
    await hosts.report("c3", [fpgaCard("c3", "5e", { accelerators: 4, traits: ["CUSTOM_T3"] })]);
    await sync.caughtUp(20_000);
    const device = await hosts.deviceAt("c3", "5e");

    await hosts.setStatus("c3", device, "MAINTAINING");
    await sync.caughtUp(20_000);
    expect((await treeOf(server, compute))[0]!.inventories.FPGA).toMatchObject({ total: 4, reserved: 4 });
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T3")).toEqual([]);

    await hosts.setStatus("c3", device, "ENABLED");
    await sync.caughtUp(20_000);
    expect((await treeOf(server, compute))[0]!.inventories.FPGA).toMatchObject({ total: 4, reserved: 0 });
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T3")).toEqual([rp("c3", "5e")]);
  });

  it("reserves a device while it carries any taint, and frees it once the last one goes", async () => {
    const compute = await novaComputeNode(server, "c9");
    const { sync, hosts } = await started();
    await hosts.report("c9", [fpgaCard("c9", "5e", { accelerators: 2, traits: ["CUSTOM_T9"] })]);
    await sync.caughtUp(20_000);
    const device = await hosts.deviceAt("c9", "5e");
    const reserved = async () => (await treeOf(server, compute))[0]!.inventories.FPGA!.reserved;

    await hosts.taint("c9", device, "cyborg.openstack.org/health", "NoExecute", "XID 79");
    await hosts.setStatus("c9", device, "MAINTAINING");
    await sync.caughtUp(20_000);
    expect(await reserved()).toBe(2);
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T9")).toEqual([]);
    await hosts.untaint("c9", device, "cyborg.openstack.org/maintenance");
    await sync.caughtUp(20_000);
    expect(await reserved()).toBe(2);
    await hosts.untaint("c9", device, "cyborg.openstack.org/health", "NoExecute");
    await sync.caughtUp(20_000);
    expect(await reserved()).toBe(0);
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T9")).toEqual([rp("c9", "5e")]);
  });

  it("reserves a device while it is cleaned and until it qualifies again, and while it is failed", async () => {
    const compute = await novaComputeNode(server, "c10");
    const { sync, hosts } = await started();
    const card = fpgaCard("c10", "5e", { accelerators: 2, traits: ["CUSTOM_T10"] });
    await hosts.report("c10", [card]);
    await sync.caughtUp(20_000);
    const deviceUuid = await hosts.deviceAt("c10", "5e");
    const reserved = async () => (await treeOf(server, compute))[0]!.inventories.FPGA!.reserved;
    const d = { hostname: "c10", deviceUuid, at: new Date().toISOString() };
    const requestId = async () => (await hosts.load("c10")).state.devices.get(deviceUuid)!.cleaning.inFlight!.requestId;
    expect(await reserved()).toBe(0);

    await hosts.run("c10", { type: "RequestDeviceCleaning", data: { ...d, reason: "test" } });
    await sync.caughtUp(20_000);
    expect(await reserved()).toBe(2);
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T10")).toEqual([]);
    await hosts.run("c10", { type: "ReportDeviceCleaned", data: { ...d, requestId: await requestId(), digest: "sha256:ab", command: ["reset"], durationMs: 5 } });
    await sync.caughtUp(20_000);
    expect(await reserved()).toBe(2);
    await hosts.report("c10", [card]);
    await sync.caughtUp(20_000);
    expect(await reserved()).toBe(0);
    expect(await candidates("resources=FPGA:1&required=CUSTOM_T10")).toEqual([rp("c10", "5e")]);

    await hosts.run("c10", { type: "RequestDeviceCleaning", data: { ...d, reason: "again" } });
    await hosts.run("c10", { type: "ReportDeviceCleaningFailed", data: { ...d, requestId: await requestId(), reason: "reset refused" } });
    await sync.caughtUp(20_000);
    expect(await reserved()).toBe(2);
  });

  it("waits for a missing compute node (the others go on), then fills it in", async () => {
    const { sync, hosts } = await started({ config: { PLACEMENT_MISSING_COMPUTE_NODE: "wait" } });
    const other = await novaComputeNode(server, "c4b");
    await hosts.report("c4", [fpgaCard("c4", "5e", { traits: ["CUSTOM_T4"] })]);
    await hosts.report("c4b", [fpgaCard("c4b", "5e", { traits: ["CUSTOM_T4"] })]);
    await sync.caughtUp(20_000);
    expect(sync.status()).toMatchObject({ state: "live", waitingHosts: 1, waiting: [{ host: "c4", reason: expect.stringContaining("no compute-node resource provider named c4") }] });
    expect((await treeOf(server, other)).map((p) => p.name)).toEqual(["c4b_0000:5e:00.0"]);
    expect(await sync.hostSynced("c4b")).toEqual({ synced: true, reason: null });
    expect(await sync.hostSynced("c4")).toEqual({ synced: false, reason: expect.stringContaining("Placement cannot match host c4 yet") });

    const compute = await novaComputeNode(server, "c4");
    await sync.retryWaiting();
    expect((await treeOf(server, compute)).map((p) => p.name)).toEqual(["c4_0000:5e:00.0"]);
    expect(sync.status().waitingHosts).toBe(0);
    expect((await sync.hostSynced("c4")).synced).toBe(true);
  });

  it("logs a host Placement cannot match once, not once per event or retry round, and once more when it matches", async () => {
    const { log, said } = capturingLogger();
    const { sync, hosts } = await started({ config: { PLACEMENT_MISSING_COMPUTE_NODE: "wait" }, log });
    for (let i = 0; i < 5; i++) {
      await hosts.report("c4q", [fpgaCard("c4q", "5e", { traits: [`CUSTOM_T4Q_V${i}`] })]);
      await sync.caughtUp(20_000);
      await sync.retryWaiting();
    }
    const refused = said("Placement cannot match this host yet; it waits and is tried again every PLACEMENT_RETRY_S", { host: "c4q" });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ err: expect.stringContaining("no compute-node resource provider named c4q") });
    expect(refused[0]).not.toHaveProperty("refusalsNotLogged");

    await novaComputeNode(server, "c4q");
    await sync.retryWaiting();
    await sync.retryWaiting();
    expect(said("Placement matches a host that was waiting", { host: "c4q" })).toHaveLength(1);
    expect(sync.status().waitingHosts).toBe(0);
  });

  it("creates a root provider named after the host when told to (standalone use)", async () => {
    const { sync, hosts } = await started({ config: { PLACEMENT_MISSING_COMPUTE_NODE: "create" } });
    await hosts.report("c6", [fpgaCard("c6", "5e", { traits: ["CUSTOM_T6"] })]);
    await sync.caughtUp(20_000);
    const { resource_providers: roots } = await api.get<{ resource_providers: Array<{ uuid: string; parent_provider_uuid: string | null }> }>("/resource_providers?name=c6");
    expect(roots).toEqual([expect.objectContaining({ parent_provider_uuid: null })]);
    expect((await treeOf(server, roots[0]!.uuid)).map((p) => p.name)).toEqual(["c6_0000:5e:00.0"]);
  });

  it("writes only what changed on a known host, and makes a provider deleted by hand again at its next change", async () => {
    const compute = await novaComputeNode(server, "c7");
    const { client, requests } = recordingClient(server);
    const { sync, hosts } = await started({ client });
    await hosts.report("c7", [fpgaCard("c7", "5e", { accelerators: 2, traits: ["CUSTOM_T7"] }), fpgaCard("c7", "af", { traits: ["CUSTOM_T7"] })]);
    await sync.caughtUp(20_000);

    requests.clear();
    await hosts.setStatus("c7", await hosts.deviceAt("c7", "5e"), "MAINTAINING");
    await sync.caughtUp(20_000);
    expect(requests.answered()).toEqual([{ method: "PUT", path: `/resource_providers/${rp("c7", "5e")}/inventories`, status: 200 }]);

    expect((await api.call("DELETE", `/resource_providers/${rp("c7", "af")}`)).status).toBe(204);
    await hosts.setStatus("c7", await hosts.deviceAt("c7", "af"), "MAINTAINING");
    await sync.caughtUp(20_000);
    expect((await treeOf(server, compute)).map((p) => [p.name, p.inventories.FPGA?.reserved, p.traits])).toEqual([
      ["c7_0000:5e:00.0", 2, ["CUSTOM_T7", "OWNER_CYBORG"]],
      ["c7_0000:af:00.0", 1, ["CUSTOM_T7", "OWNER_CYBORG"]],
    ]);
    expect(sync.status()).toMatchObject({ waitingHosts: 0, retries: 0 });
  });

  it("resumes from its checkpoint after a restart, and after a lost checkpoint makes everything match again without writing", async () => {
    const compute = await novaComputeNode(server, "c5");
    const first = await started();
    await first.hosts.report("c5", [fpgaCard("c5", "5e", { traits: ["CUSTOM_T5_A"] }), fpgaCard("c5", "af", { traits: ["CUSTOM_T5_A"] })]);
    await first.sync.caughtUp(20_000);
    await first.sync.stop();

    // While it is stopped: one card reprogrammed.
    await first.hosts.report("c5", [fpgaCard("c5", "5e", { traits: ["CUSTOM_T5_B"] }), fpgaCard("c5", "af", { traits: ["CUSTOM_T5_A"] })]);
    const { client, requests } = recordingClient(server);
    const second = await started({ store: first.store, readStore: first.readStore, client });
    await second.sync.caughtUp(20_000);
    expect((await treeOf(server, compute)).map((p) => [p.name, p.traits])).toEqual([
      ["c5_0000:5e:00.0", ["CUSTOM_T5_B", "OWNER_CYBORG"]],
      ["c5_0000:af:00.0", ["CUSTOM_T5_A", "OWNER_CYBORG"]],
    ]);
    // Only the events after the checkpoint were handled: one host, one write (the traits).
    expect(requests.answered().filter((r) => r.path.startsWith("/resource_providers?in_tree="))).toHaveLength(1);
    expect(requests.writes()).toEqual([
      { method: "PUT", path: "/traits/CUSTOM_T5_B", status: 201 },
      { method: "PUT", path: `/resource_providers/${rp("c5", "5e")}/traits`, status: 200 },
    ]);
    await second.sync.stop();

    // The checkpoint is lost: the whole log is followed again; Placement already matches, so nothing is written.
    await first.readStore.drop("placement-sync");
    requests.clear();
    const third = await started({ store: first.store, readStore: first.readStore, client });
    await third.sync.caughtUp(20_000);
    expect(requests.log.length).toBeGreaterThan(0);
    expect(requests.writes()).toEqual([]);
  });
});
