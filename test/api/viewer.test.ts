import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { startTestService, type TestService } from "./harness.js";

const VIEWER = `{ viewer { principal roles projectId hostname allows } }`;

describe("viewer: who the token is", () => {
  let t: TestService;
  beforeAll(async () => (t = await startTestService()));
  afterAll(() => t?.close());

  it("names the principal, its roles and the rules they allow", async () => {
    const admin = (await t.ok("admin", VIEWER)).viewer;
    expect(admin).toMatchObject({ principal: "admin", roles: ["admin"], projectId: "p-admin", hostname: null });
    expect(admin.allows).toContain("device:status");
    const reader = (await t.ok("reader", VIEWER)).viewer;
    expect(reader.allows).toEqual(["device_profile:read", "arq:read"]);
    expect((await t.ok("agent", VIEWER)).viewer).toMatchObject({ roles: ["agent"], hostname: "compute1", allows: ["inventory:report", "programming:agent"] });
  });

  it("answers UNAUTHENTICATED without a token", async () => {
    expect((await t.gql(null, VIEWER)).errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("answers a token it does not know with HTTP 401 and a JSON body, before running anything", async () => {
    const res = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer not-a-token-of-this-service" }, body: JSON.stringify({ query: VIEWER }) });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer .*invalid_token/);
    const body = (await res.json()) as { errors: Array<{ message: string; extensions: { code: string } }>; data?: unknown };
    expect(body.errors[0]!.extensions.code).toBe("UNAUTHENTICATED");
    expect(body.errors[0]!.message).toMatch(/token file .*AUTH_TOKENS_FILE/);
    expect(body.data).toBeUndefined();
    const malformed = await fetch(t.url, { method: "POST", headers: { "content-type": "application/json", authorization: "Token abc" }, body: JSON.stringify({ query: VIEWER }) });
    expect(malformed.status).toBe(401);
  });

  it("closes a WebSocket whose token it does not know with 4403, and graphql-ws reports it", async () => {
    const client = createClient({ url: t.url.replace(/^http/, "ws"), webSocketImpl: WebSocket, connectionParams: { authorization: "Bearer not-a-token" }, retryAttempts: 0, lazy: true });
    const closed = await new Promise<{ code: number }>((resolve) => {
      client.subscribe({ query: VIEWER }, { next: () => undefined, error: (e) => resolve(e as { code: number }), complete: () => resolve({ code: 0 }) });
    });
    expect(closed.code).toBe(4403);
    await client.dispose();
  });
});
