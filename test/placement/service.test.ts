/**
 * The placement role in the composed service: PLACEMENT_URL makes `startService` run the sync
 * beside the API; a host reported through GraphQL reaches Placement as providers, and /readyz
 * shows the sync under `followers`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { placementApi, startPlacementServer, type PlacementServer } from "../support/placement.js";

let server: PlacementServer;
let t: TestService;

beforeAll(async () => {
  server = await startPlacementServer();
  t = await startTestService({ env: { PLACEMENT_URL: server.url, PLACEMENT_TOKEN: server.token, PLACEMENT_MISSING_COMPUTE_NODE: "create" } });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await server?.destroy();
});

describe("the placement role", () => {
  it("keeps Placement matching what agents report, and shows its progress on /readyz", async () => {
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    const [rp] = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders as Array<{ uuid: string; name: string; total: number; resourceClass: string }>;
    expect(rp!.uuid).toBe(rpUuidFor(rp!.name));
    const api = placementApi(server);
    await expect
      .poll(async () => (await api.call<{ inventories: Record<string, { total: number }> }>("GET", `/resource_providers/${rp!.uuid}/inventories`)).body?.inventories, { timeout: 30_000 })
      .toMatchObject({ [rp!.resourceClass]: { total: rp!.total } });
    const readyz = (await (await fetch(new URL("/readyz", t.url), { headers: { authorization: `Bearer ${TOKENS.admin.token}` } })).json()) as { followers: Array<{ name: string; state: string }> };
    expect(readyz.followers.map((f) => f.name)).toContain("placement-sync");
    expect(["live", "catching-up"]).toContain(readyz.followers.find((f) => f.name === "placement-sync")!.state);
    // os-acc's initialize waits for this: the host's traits are in Placement.
    await expect.poll(async () => (await t.ok("service", `{ hostStatus(hostname: "compute1") { placementSynced notReadyReason } }`)).hostStatus, { timeout: 30_000 }).toEqual({ placementSynced: true, notReadyReason: null });
  }, 60_000);
});
