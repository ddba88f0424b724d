/**
 * Read-your-writes through every front door: with the projector held at a write, a mutation (a
 * REST POST, a keyed mutation) answers only once the read models show it, so a read sent at once
 * sees it; a query and a refused mutation answer at once meanwhile, but for a refusal that undid
 * what the call wrote (create-and-bind's), which waits until the models show the undoing.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HeldWrites } from "../support/held-writes.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";

const PROFILE = `query($name: String!) { deviceProfile(name: $name) { name } }`;
const GROUPS = [{ "resources:FPGA": "1" }];

describe("read-your-writes", () => {
  const projectorWrites = new HeldWrites();
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService({ overrides: { wrapProjectorStore: projectorWrites.wrap.bind(projectorWrites) } });
  }, 60_000);
  afterAll(async () => {
    projectorWrites.open();
    await t?.close();
  });

  /** Runs the write with the projector held at it until 100 ms later; says whether the answer came after the release. */
  async function whileHeld<T>(write: () => Promise<T>, meanwhile: () => Promise<void> = async () => {}): Promise<{ answer: T; afterRelease: boolean }> {
    projectorWrites.close();
    let released = false;
    const answer = write();
    await projectorWrites.held;
    await meanwhile();
    setTimeout(() => {
      released = true;
      projectorWrites.open();
    }, 100);
    const a = await answer;
    return { answer: a, afterRelease: released };
  }

  const profileNamed = async (name: string) => (await t.ok("admin", PROFILE, { name })).deviceProfile as { name: string } | null;

  it("GraphQL: a mutation reads its own write at once", async () => {
    const { afterRelease } = await whileHeld(() => t.ok("admin", op.CREATE_PROFILE, { input: { name: "ryw-gql", groups: GROUPS } }));
    expect(afterRelease).toBe(true);
    expect(await profileNamed("ryw-gql")).toEqual({ name: "ryw-gql" });
  });

  it("GraphQL under an Idempotency-Key: the answer waits too, and a retry replays it", async () => {
    const keyed = () =>
      fetch(t.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.admin.token}`, "idempotency-key": "ryw-key" },
        body: JSON.stringify({ query: op.CREATE_PROFILE, variables: { input: { name: "ryw-keyed", groups: GROUPS } } }),
      }).then((r) => r.json() as Promise<{ data?: { createDeviceProfile: { uuid: string } } }>);
    const { answer, afterRelease } = await whileHeld(keyed);
    expect(afterRelease).toBe(true);
    expect(await profileNamed("ryw-keyed")).toEqual({ name: "ryw-keyed" });
    expect((await keyed()).data?.createDeviceProfile.uuid).toBe(answer.data?.createDeviceProfile.uuid);
  });

  it("REST: a POST reads its own write at once", async () => {
    const headers = { "content-type": "application/json", "x-auth-token": TOKENS.admin.token };
    const post = () => fetch(new URL("/v2/device_profiles", t.url), { method: "POST", headers, body: JSON.stringify([{ name: "ryw-rest", groups: GROUPS }]) });
    const { answer, afterRelease } = await whileHeld(post);
    expect(answer.status).toBe(201);
    expect(afterRelease).toBe(true);
    const list = await fetch(new URL("/v2/device_profiles?name=ryw-rest", t.url), { headers });
    expect(((await list.json()) as { device_profiles: unknown[] }).device_profiles).toHaveLength(1);
  });

  it("hostStatus, read from the log, answers once the read models show what it read", async () => {
    projectorWrites.close();
    let released = false;
    const write = t.ok("admin", op.CREATE_PROFILE, { input: { name: "ryw-status", groups: GROUPS } });
    await projectorWrites.held;
    const status = t.ok("service", `query($h: String!) { hostStatus(hostname: $h) { reported programmingInProgress } }`, { h: "ryw-host" }).then((a) => ({ a, afterRelease: released }));
    setTimeout(() => {
      released = true;
      projectorWrites.open();
    }, 100);
    await write;
    expect(await status).toEqual({ a: { hostStatus: { reported: false, programmingInProgress: 0 } }, afterRelease: true });
  });

  it("a query and a refused mutation answer while the read models are behind", async () => {
    let during: { query: unknown; refused: unknown } | undefined;
    const meanwhile = async () => {
      const query = await t.ok("admin", PROFILE, { name: "ryw-gql" });
      const refused = await t.gql("admin", op.CREATE_PROFILE, { input: { name: "ryw-gql", groups: GROUPS } });
      during = { query, refused: refused.errors?.[0]?.extensions?.code };
    };
    const { afterRelease } = await whileHeld(() => t.ok("admin", op.CREATE_PROFILE, { input: { name: "ryw-behind", groups: GROUPS } }), meanwhile);
    expect(afterRelease).toBe(true);
    expect(during).toEqual({ query: { deviceProfile: { name: "ryw-gql" } }, refused: "CONFLICT" });
  });

  it("a refusal after writes the call undid (create-and-bind refused at its bind) answers once the models show the undoing", async () => {
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "ryw-pgpu", groups: [{ "resources:PGPU": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid as string;
    const count = async () => (await t.ok("admin", `{ acceleratorRequests { totalCount } }`)).acceleratorRequests.totalCount as number;
    const before = await count();
    const plug = `mutation($i: ID!, $r: [PlugProviderInput!]!) { createAndBindAcceleratorRequests(instanceUuid: $i, providers: $r, deviceProfileName: "ryw-pgpu") { uuid } }`;
    // The fake device's provider offers FPGA: the bind is refused, after the ARQ was created.
    const { answer, afterRelease } = await whileHeld(() => t.gql("service", plug, { i: randomUUID(), r: [{ hostname: "compute1", deviceRpUuid: rp }] }));
    expect(answer.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", details: { reason: "TARGET_MISMATCH" } });
    expect(afterRelease).toBe(true);
    expect(await count()).toBe(before);
  });
});
