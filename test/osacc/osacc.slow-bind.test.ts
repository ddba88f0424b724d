/**
 * A plug whose binds do not resolve in the bind's answer (a slow host: the binder allocates later)
 * waits for the bound events; a plug whose answer shows every ARQ bound returns at once.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { createLogger } from "../../src/infra/logger.js";
import { OsAcc, type SelectedRp } from "../../src/clients/osacc/index.js";
import { fixtureEnv } from "../agent/drivers/fixture-env.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";

let t: TestService;
let acc: OsAcc;
let rp: SelectedRp;
let release: () => void = () => undefined;
const held = new Promise<void>((r) => (release = r));

beforeAll(async () => {
  // Binds only start in the request; the binder, held here, allocates later.
  t = await startTestService({ overrides: { bindInline: false, binder: { beforeAllocate: () => held } } });
  await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "fpga-2", groups: [{ "resources:FPGA": "2" }] } });
  await reportOnce({ client: { url: t.url, token: TOKENS.agent.token }, hostname: "compute1", drivers: ["fake"], env: fixtureEnv("no-accelerators", { hostname: "compute1" }), intervalMs: 60_000, log: createLogger("silent"), retries: 0, lastGood: new Map() });
  rp = { uuid: (await t.ok("service", `query { resourceProviders(hostname: "compute1") { uuid } }`)).resourceProviders[0].uuid, hostname: "compute1" };
  acc = new OsAcc({ url: t.url, token: TOKENS.service.token, hostname: "compute1", bindTimeoutMs: 30_000 });
});
afterAll(async () => {
  release();
  await acc?.close();
  await t?.close();
});

it("waits for the bound events when the bind's answer leaves ARQs BIND_STARTED, then returns what to attach", async () => {
  const instance = { uuid: randomUUID(), project: "p1" };
  let settled = false;
  const plugging = acc.plug(instance, rp, { "accel:device_profile": "fpga-2" }).finally(() => (settled = true));
  const states = async () =>
    (await t.ok("service", `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { state } } }`, { i: instance.uuid })).acceleratorRequests.nodes.map((a: { state: string }) => a.state);
  for (let i = 0; i < 200 && (await states()).length < 2; i++) await new Promise((r) => setTimeout(r, 25));
  expect(await states()).toEqual(["BIND_STARTED", "BIND_STARTED"]);
  await new Promise((r) => setTimeout(r, 200));
  expect(settled).toBe(false);
  release();
  const attached = await plugging;
  expect(attached).toHaveLength(2);
  expect(attached.every((a) => /^0000:0c:0[0-9]\.[0-7]$/.test(a.pciId ?? ""))).toBe(true);
  expect(await states()).toEqual(["BOUND", "BOUND"]);
  expect(await acc.unplug(instance)).toBe(2);
});
