/**
 * Work per message is bounded: every list in an operation's arguments has a cap, a subscription
 * waits for each ARQ once however often it is named, and one client cannot make the server work
 * for the others' time.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUARDS } from "../../src/api/graphql/guards.js";
import { MAX_ARQ_LIST } from "../../src/app/request-limits.js";
import { collect, FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

let t: TestService;
let arq: { uuid: string };

beforeAll(async () => {
  t = await startTestService();
  await t.ok("admin", op.CREATE_PROFILE, { input: { name: "one-fpga", groups: [{ "resources:FPGA": "1" }] } });
  await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) });
  const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
  // A member of project p1 creates it: the reader of p1 sees it.
  [arq] = (await t.ok("member", op.CREATE_ARQS, { name: "one-fpga" })).createAcceleratorRequests;
  const instance = randomUUID();
  await t.ok("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: instance }] });
});
afterAll(() => t?.close());

describe("bounded work per message", () => {
  it("a bound ARQ named many times in one subscription is sent once", async () => {
    const sub = collect<op.BoundEvent>(t.ws("reader"), op.BOUND, { arqs: Array.from({ length: 500 }, () => arq.uuid) });
    const [first] = await sub.next(1);
    expect(first!.acceleratorRequestBound.tag).toBe(arq.uuid);
    // A second subscription of the same ARQ on the same connection: once its event is in, every
    // event the first subscription would send for the repeated uuids has been sent too.
    const again = collect<op.BoundEvent>(t.ws("reader"), op.BOUND, { arqs: [arq.uuid] });
    await again.next(1);
    await sub.next(1);
    expect(sub.events).toHaveLength(1);
    sub.unsubscribe();
    again.unsubscribe();
  });

  it("refuses a list longer than the cap before any work, over WebSocket and HTTP, while others are answered", async () => {
    const huge = Array.from({ length: 20_000 }, () => arq.uuid);
    const sub = collect<op.BoundEvent>(t.ws("reader"), op.BOUND, { arqs: huge });
    const concurrent = t.gql("admin", `{ deviceProfiles { name } }`);
    await expect(sub.next(1)).rejects.toThrow(/BAD_USER_INPUT/);
    expect(JSON.stringify(sub.errors)).toContain(`arqUuids holds 20000 items; at most ${DEFAULT_GUARDS.maxListItems} a list`);
    expect(sub.events).toHaveLength(0);
    expect((await concurrent).data.deviceProfiles.map((p: { name: string }) => p.name)).toContain("one-fpga");

    const literal = `mutation { unbindAcceleratorRequests(arqUuids: [${Array.from({ length: 1100 }, () => `"${randomUUID()}"`).join(",")}]) { uuid } }`;
    const inline = await t.gql("service", literal);
    expect(inline.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "arqUuids", items: 1100 });
    const variables = await t.gql("service", op.UNBIND, { uuids: Array.from({ length: 1100 }, () => randomUUID()) });
    expect(variables.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "arqUuids", items: 1100 });
    // Nested in a JSON value too, named by the key that holds it.
    const nested = await t.gql("admin", op.CREATE_PROFILE, { input: { name: "nested", groups: [{ "resources:FPGA": "1", x: Array.from({ length: 1100 }, () => 1) }] } });
    expect(nested.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "x" });
  });

  it("a subscription for more distinct ARQs than one request may name is refused with the field", async () => {
    const many = Array.from({ length: MAX_ARQ_LIST + 1 }, () => randomUUID());
    const sub = collect<op.BoundEvent>(t.ws("reader"), op.BOUND, { arqs: many });
    await expect(sub.next(1)).rejects.toThrow(/BAD_USER_INPUT/);
    expect(JSON.stringify(sub.errors)).toContain(`at most ${MAX_ARQ_LIST} ARQs per subscription`);
  });
});
