/**
 * Fairness: a per-token request rate limit over every front door (RATE_LIMITED, 429 with
 * Retry-After), shared by replicas through Redis; and a per-project ARQ quota (QUOTA_EXCEEDED),
 * held even by creations that race for the last places.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../support/redis.js";
import { startTestService, TOKENS, type TestService, type Who } from "./harness.js";
import * as op from "./operations.js";

const post = async (t: TestService, token: string | null, query: string, variables: Record<string, unknown> = {}) => {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(t.url, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  const body = (await res.json()) as { data?: any; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> };
  return { status: res.status, retryAfter: res.headers.get("retry-after"), code: body.errors?.[0]?.extensions?.code, body };
};
const rest = async (t: TestService, who: Who, path: string) => {
  const res = await fetch(new URL(path, t.url), { headers: { "x-auth-token": TOKENS[who].token } });
  const body = (await res.json()) as { error_message?: string };
  return { status: res.status, retryAfter: res.headers.get("retry-after"), code: body.error_message ? JSON.parse(body.error_message).code : undefined };
};

describe("the per-token rate limit", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { RATE_LIMIT_REQUESTS: "5", RATE_LIMIT_WINDOW_S: "60" } });
  });
  afterAll(() => t?.close());

  it("refuses a token's requests past the limit with RATE_LIMITED, 429 and Retry-After; other tokens go on", async () => {
    for (let i = 0; i < 5; i++) expect((await post(t, TOKENS.member.token, "{ deviceProfiles { name } }")).status).toBe(200);
    const refused = await post(t, TOKENS.member.token, "{ deviceProfiles { name } }");
    expect(refused).toMatchObject({ status: 429, code: "RATE_LIMITED" });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refused.body.errors![0]!.extensions!.retryAfterSeconds).toBe(Number(refused.retryAfter));
    expect(refused.body.errors![0]!.message).toMatch(/5 per 60 s/);
    // Another token of the same project has its own budget; exempt roles are not counted.
    expect((await post(t, TOKENS.manager.token, "{ deviceProfiles { name } }")).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await post(t, TOKENS.service.token, "{ deviceProfiles { name } }")).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await post(t, TOKENS.admin.token, "{ deviceProfiles { name } }")).status).toBe(200);
  });

  it("holds over WebSocket, each operation counted", async () => {
    const client = t.ws("member2");
    const run = () =>
      new Promise<Array<{ extensions?: Record<string, unknown> }> | undefined>((resolve, reject) => {
        let errors: Array<{ extensions?: Record<string, unknown> }> | undefined;
        client.subscribe({ query: "{ deviceProfiles { name } }" }, { next: (v) => (errors = v.errors as never), error: (e) => resolve(e as never), complete: () => resolve(errors) });
        void reject;
      });
    for (let i = 0; i < 5; i++) expect(await run()).toBeUndefined();
    const refused = await run();
    expect(refused?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED" });
    expect(refused?.[0]?.extensions?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it("holds over REST, in Cyborg's envelope", async () => {
    for (let i = 0; i < 5; i++) expect((await rest(t, "reader", "/v2/device_profiles")).status).toBe(200);
    expect(await rest(t, "reader", "/v2/device_profiles")).toMatchObject({ status: 429, code: "RATE_LIMITED" });
  });

  it("counts requests with unknown tokens by address: guessing tokens is slowed down too", async () => {
    const codes: unknown[] = [];
    for (let i = 0; i < 8; i++) codes.push((await post(t, `guess-${i}`, "{ deviceProfiles { name } }")).status);
    expect(codes.slice(0, 5)).not.toContain(429);
    expect(codes.slice(5)).toEqual([429, 429, 429]);
  });
});

describe("the rate limit with Redis: replicas share the counters", () => {
  let redis: TestRedis;
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, RATE_LIMIT_REQUESTS: "5", RATE_LIMIT_WINDOW_S: "60" };
    a = await startTestService({ env });
    b = await startTestService({ env: { ...env, ROLES: "api" } });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await redis?.stop();
  });

  it("a token's requests count on every replica", async () => {
    for (let i = 0; i < 3; i++) expect((await post(a, TOKENS.member.token, "{ __typename }")).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await post(b, TOKENS.member.token, "{ __typename }")).status).toBe(200);
    expect((await post(b, TOKENS.member.token, "{ __typename }")).code).toBe("RATE_LIMITED");
    expect((await post(a, TOKENS.member.token, "{ __typename }")).code).toBe("RATE_LIMITED");
  });
});

describe("the per-project ARQ quota", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { ARQ_QUOTA_PER_PROJECT: "3" } });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "two", groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }] } });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "one", groups: [{ "resources:FPGA": "1" }] } });
  });
  afterAll(() => t?.close());

  const held = async (who: Who) => (await t.ok(who, "{ acceleratorRequests { totalCount } }")).acceleratorRequests.totalCount as number;

  it("refuses a creation that would take the project past its quota, naming the numbers; deleting makes room", async () => {
    const first = (await t.ok("member", op.CREATE_ARQS, { name: "two" })).createAcceleratorRequests as Array<{ uuid: string }>;
    expect(first).toHaveLength(2);
    const refused = await post(t, TOKENS.member.token, op.CREATE_ARQS, { name: "two" });
    expect(refused.code).toBe("QUOTA_EXCEEDED");
    expect(refused.body.errors![0]!.message).toMatch(/project p1 holds 2 .*creating 2 more.*quota of 3/);
    expect(refused.body.errors![0]!.extensions!.details).toEqual({ projectId: "p1", resourceClass: "ARQS", held: 2, asking: 2, limit: 3 });
    expect(await held("member")).toBe(2); // the refusal wrote nothing
    // Another project has its own quota; admins and the compute service are not held to it.
    expect((await t.ok("member2", op.CREATE_ARQS, { name: "two" })).createAcceleratorRequests).toHaveLength(2);
    await t.ok("member", op.DELETE_ARQS, { uuids: [first[0]!.uuid] });
    expect((await t.ok("member", op.CREATE_ARQS, { name: "two" })).createAcceleratorRequests).toHaveLength(2);
    expect(await held("member")).toBe(3);
    expect((await post(t, TOKENS.member.token, op.CREATE_ARQS, { name: "one" })).code).toBe("QUOTA_EXCEEDED");
    expect((await t.ok("service", op.CREATE_ARQS, { name: "two" })).createAcceleratorRequests).toHaveLength(2);
  });

  it("creations racing for the last place: exactly one takes it, the others are refused", async () => {
    // member2's project holds 2 from the test above: one place is left; ten creations race for it.
    const create = () => post(t, TOKENS.member2.token, op.CREATE_ARQS, { name: "one" });
    const results = await Promise.all(Array.from({ length: 10 }, create));
    const won = results.filter((r) => !r.code).length;
    expect(results.filter((r) => r.code).map((r) => r.code)).toEqual(Array(10 - won).fill("QUOTA_EXCEEDED"));
    // The quota stream serialises the claims: exactly one takes the last place.
    expect(won).toBe(1);
    expect(await held("member2")).toBe(3);
    expect((await create()).code).toBe("QUOTA_EXCEEDED");
  });

  it("admins set a project's limits per class; a project reads its own quota, not another's", async () => {
    const QUOTA = "query Q($p: String!) { projectQuota(projectId: $p) { classes { resourceClass limit own usage } claims } }";
    const SET = "mutation S($p: String!, $l: [QuotaLimitInput!]!) { setProjectQuota(projectId: $p, limits: $l) { classes { resourceClass limit own usage } } }";
    expect((await post(t, TOKENS.member.token, SET, { p: "p1", l: [{ resourceClass: "FPGA", limit: 100 }] })).code).toBe("FORBIDDEN");
    expect((await post(t, TOKENS.member.token, QUOTA, { p: "p2" })).code).toBe("FORBIDDEN");
    const set = (await t.ok("admin", SET, { p: "p1", l: [{ resourceClass: "FPGA", limit: 3 }, { resourceClass: "ARQS", limit: 10 }] })).setProjectQuota;
    expect(set.classes).toEqual([
      { resourceClass: "ARQS", limit: 10, own: true, usage: 3 },
      { resourceClass: "FPGA", limit: 3, own: true, usage: 3 },
    ]);
    const refused = await post(t, TOKENS.member.token, op.CREATE_ARQS, { name: "one" });
    expect(refused.body.errors![0]!.extensions!.details).toEqual({ projectId: "p1", resourceClass: "FPGA", held: 3, asking: 1, limit: 3 });
    expect((await t.ok("member", QUOTA, { p: "p1" })).projectQuota.claims).toBe(3);
    expect((await post(t, TOKENS.admin.token, SET, { p: "p1", l: [{ resourceClass: "FPGA", limit: -1 }] })).code).toBe("BAD_USER_INPUT");
  });

  it("holds over REST: 403 with the code", async () => {
    const res = await fetch(new URL("/v2/accelerator_requests", t.url), {
      method: "POST",
      headers: { "x-auth-token": TOKENS.member.token, "content-type": "application/json" },
      body: JSON.stringify({ device_profile_name: "one" }),
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(((await res.json()) as { error_message: string }).error_message)).toMatchObject({ code: "QUOTA_EXCEEDED" });
  });
});
