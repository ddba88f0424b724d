/**
 * REST_AUTH=noauth (development only): every REST request acts as an admin of project "noauth"
 * that also acts as the compute service; GraphQL keeps its tokens. The production mode refuses
 * it (test/config).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenRegistry } from "../../src/api/auth/tokens.js";
import { startHttpServer, type RunningServer } from "../../src/api/http-server.js";
import { ProgrammingFeed } from "../../src/api/programming-feed.js";
import { createLogger } from "../../src/infra/logger.js";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { bindPatch, restClient } from "./support.js";

describe("REST_AUTH=noauth", () => {
  let t: TestService;
  let server: RunningServer;

  beforeAll(async () => {
    t = await startTestService();
    const s = t.service;
    // A second front door on the same core, as the composition root builds it, with noauth.
    server = await startHttpServer(
      {
        services: {
          app: s.app,
          readStore: s.readStore,
          store: s.store,
          notifications: s.notifications,
          evictions: { listen: () => { throw new Error("no eviction notices in this test"); } },
          programming: new ProgrammingFeed(s.store, createLogger("silent")),
          catchUp: async () => {
            const head = await s.store.headPosition();
            if (head !== undefined) await s.projector!.waitFor(head, { timeoutMs: 5_000 });
          },
          limits: { maxBindings: 100 },
          bindInline: true,
          idempotencyTtlMs: 60_000,
        },
        tokens: new TokenRegistry([]),
        log: createLogger("silent"),
        maxBodyBytes: 1 << 20,
        ready: async () => ({ ok: true, detail: {} }),
        restAuth: "noauth",
      },
      0,
      "127.0.0.1",
    );
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  it("needs no token and acts as an admin of project noauth, binding as the service", async () => {
    const { call } = restClient(server.url);
    expect((await call(null, "GET", "/v2/devices")).status).toBe(200);
    const created = await call(null, "POST", "/v2/device_profiles", { body: [{ name: "dev-fpga", groups: [{ "resources:FPGA": "1" }] }] });
    expect(created.status, created.text).toBe(201);
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) });
    const rp = (await call(null, "GET", "/v2/deployables")).json.deployables[0].rp_uuid;
    const [arq] = (await call(null, "POST", "/v2/accelerator_requests", { body: { device_profile_name: "dev-fpga" } })).json.arqs;
    expect(arq.project_id).toBe("noauth");
    const instance = randomUUID();
    expect((await call(null, "PATCH", "/v2/accelerator_requests", { body: bindPatch([arq.uuid], { hostname: "compute1", rp, instance }) })).status).toBe(202);
    expect((await call(null, "GET", `/v2/accelerator_requests/${arq.uuid}`)).json.state).toBe("Bound");
    expect((await call(null, "DELETE", `/v2/accelerator_requests?instance=${instance}`)).status).toBe(204);
    // GraphQL on the same server still wants a bearer token.
    const gql = await fetch(server.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "{ devices { totalCount } }" }) });
    const answer = (await gql.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(answer.errors[0]!.extensions.code).toBe("UNAUTHENTICATED");
  });
});
