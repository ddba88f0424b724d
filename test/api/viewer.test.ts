import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
});
