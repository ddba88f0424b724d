/**
 * os-acc keeps one subscription socket and kept-alive HTTP connections for all its plugs: when the
 * service restarts, the next plug connects again (the old connections are gone) and works.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { createLogger } from "../../src/infra/logger.js";
import { OsAcc } from "../../src/clients/osacc/index.js";
import { fixtureEnv } from "../agent/drivers/fixture-env.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";

const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-osacc-reconnect-"));
let t: TestService | undefined;
let acc: OsAcc | undefined;
afterAll(async () => {
  await acc?.close();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it("plugs again after the service restarted under it, on the same OsAcc", async () => {
  t = await startTestService({ dataDir });
  const port = new URL(t.url).port;
  await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
  await reportOnce({ client: { url: t.url, token: TOKENS.agent.token }, hostname: "compute1", drivers: ["fake"], env: fixtureEnv("no-accelerators", { hostname: "compute1" }), intervalMs: 60_000, log: createLogger("silent"), retries: 0, lastGood: new Map() });
  const rp = { uuid: (await t.ok("service", `query { resourceProviders(hostname: "compute1") { uuid } }`)).resourceProviders[0].uuid, hostname: "compute1" };
  acc = new OsAcc({ url: t.url, token: TOKENS.service.token, hostname: "compute1", bindTimeoutMs: 30_000 });
  const cycle = async () => {
    const instance = { uuid: randomUUID(), project: "p1" };
    const attached = await acc!.plug(instance, rp, { "accel:device_profile": "fpga-1" });
    return { attached: attached.length, released: await acc!.unplug(instance) };
  };
  expect(await cycle()).toEqual({ attached: 1, released: 1 });

  await t.close();
  t = await startTestService({ dataDir, env: { PORT: port } });
  expect(await cycle()).toEqual({ attached: 1, released: 1 });
});
