/** An agent speaks only for its host: a report naming another host's deployable is refused, and the refusal logged. */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

let t: TestService;
const logged: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split("\n").filter(Boolean)) logged.push(JSON.parse(line));
    done();
  },
});

/** The fake driver's device with its deployable named `name`. */
const fakeNamed = (name: string) => FAKE_HOST_DEVICES(2).map((d) => ({ ...d, deployables: d.deployables.map((dep) => ({ ...dep, name })) }));
const rps = async (hostname?: string) => (await t.ok("admin", op.RPS, hostname === undefined ? {} : { hostname })).resourceProviders as Array<Record<string, unknown>>;

beforeAll(async () => {
  t = await startTestService({ log: pino({ level: "warn" }, sink) });
  await t.ok("admin", op.REPORT, { hostname: "compute2", devices: fakeNamed("compute2_FakeDevice") });
});
afterAll(() => t.close());

describe("an agent reports only its own host's deployables", () => {
  it("refuses compute1's agent reporting compute2_FakeDevice, leaves compute2's provider as it was, and logs a warning", async () => {
    const before = await rps("compute2");
    expect(before).toMatchObject([{ uuid: rpUuidFor("compute2_FakeDevice"), parentProviderName: "compute2", total: 2 }]);

    const r = await t.gql("agent", op.REPORT, { hostname: "compute1", devices: fakeNamed("compute2_FakeDevice") });
    expect(r.data).toBeNull();
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]!.message).toMatch(/deployable compute2_FakeDevice names host compute2, not compute1: .*compute1_<device>/);
    expect(r.errors![0]!.extensions).toEqual({
      code: "BAD_USER_INPUT",
      field: "devices[0].deployables[0].name",
      details: { reason: "NOT_THIS_HOSTS_DEPLOYABLE", hostname: "compute1", deployable: "compute2_FakeDevice" },
    });

    expect(await rps("compute2")).toEqual(before);
    expect(await rps("compute1")).toEqual([]);
    expect((await rps()).filter((p) => p.uuid === rpUuidFor("compute2_FakeDevice"))).toHaveLength(1);
    expect(logged.filter((l) => l.msg === "host report refused")).toEqual([
      expect.objectContaining({ level: 40, principal: "agent", hostname: "compute1", code: "BAD_USER_INPUT", field: "devices[0].deployables[0].name", reason: "NOT_THIS_HOSTS_DEPLOYABLE", deployable: "compute2_FakeDevice" }),
    ]);
  });

  it("takes compute1's own report from its agent, beside compute2's", async () => {
    const r = await t.ok("agent", op.REPORT, { hostname: "compute1", devices: fakeNamed("compute1_FakeDevice") });
    expect(r.reportHostInventory).toMatchObject({ hostname: "compute1", added: 1 });
    expect(await rps("compute1")).toMatchObject([{ uuid: rpUuidFor("compute1_FakeDevice"), parentProviderName: "compute1", total: 2 }]);
    expect(await rps("compute2")).toMatchObject([{ uuid: rpUuidFor("compute2_FakeDevice"), parentProviderName: "compute2", total: 2 }]);
  });

  it("refuses deployables from a host whose name has '_', whoever reports them", async () => {
    const r = await t.gql("admin", op.REPORT, { hostname: "compute_9", devices: fakeNamed("compute_9_FakeDevice") });
    expect(r.errors?.[0]).toMatchObject({ message: expect.stringMatching(/host compute_9 cannot report deployables/), extensions: { code: "BAD_USER_INPUT", field: "hostname" } });
    expect(await rps("compute_9")).toEqual([]);
  });
});
