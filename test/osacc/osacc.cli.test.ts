/** `cyborg-es os-acc` as a hypervisor hook calls it: JSON in on stdin, JSON out, exit status 1 on an error. */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, TOKENS, FAKE_HOST_DEVICES, type TestService } from "../api/harness.js";
import { buildCli, runCli, type BuiltCli } from "../support/cli.js";

let t: TestService;
let built: BuiltCli;
let rpUuid: string;
const osacc = (call: string, input: unknown, token = TOKENS.service.token) =>
  runCli(built.cli, ["os-acc", "--url", t.url, "--token", token, "--hostname", "compute1", call], { input: JSON.stringify(input) });

beforeAll(async () => {
  [t, built] = await Promise.all([startTestService(), buildCli()]);
  await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
  await t.ok("agent", `mutation($d: [DriverDeviceInput!]!) { reportHostInventory(hostname: "compute1", devices: $d) { added } }`, { d: FAKE_HOST_DEVICES(2) });
  rpUuid = (await t.ok("service", `{ resourceProviders(hostname: "compute1") { uuid } }`)).resourceProviders[0].uuid;
});
afterAll(async () => {
  await t?.close();
  await built?.remove();
});

describe("cyborg-es os-acc", () => {
  it("initialize, plug, operation and unplug: JSON in, JSON out", async () => {
    expect(JSON.parse((await osacc("initialize", { timeoutMs: 5000 })).stdout)).toEqual({ ready: true });
    const instance = { uuid: randomUUID(), project: "p1" };
    const plugged = await osacc("plug", { instance, selectedRp: { uuid: rpUuid }, extraSpecs: { "accel:device_profile": "fpga-1" } });
    expect(plugged.code).toBe(0);
    const [entry] = JSON.parse(plugged.stdout);
    expect(entry).toMatchObject({ attachHandleType: "TEST_PCI", pciId: expect.stringMatching(/^0000:0c:/), hostdevXml: expect.stringContaining("<hostdev") });
    expect(JSON.parse((await osacc("operation", { instance, operation: "reboot" })).stdout)).toEqual({ operation: "reboot", effect: "keep", released: 0, plugged: null });
    expect(JSON.parse((await osacc("unplug", { instance })).stdout)).toEqual({ released: 1 });
  });

  it("answers an error as JSON with its code and field, and exits with status 1", async () => {
    const instance = { uuid: randomUUID() };
    const refused = await osacc("operation", { instance, operation: "live-migrate" });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({ error: { code: "UNSUPPORTED_OPERATION", message: expect.stringMatching(/live migration/), field: "operation" } });
    const bad = await osacc("plug", { instance, selectedRp: {}, extraSpecs: { "accel:device_profile": "fpga-1" } });
    expect(JSON.parse(bad.stdout)).toEqual({ error: { code: "BAD_USER_INPUT", message: expect.any(String), field: "selectedRp.uuid" } });
    const notJson = await runCli(built.cli, ["os-acc", "--url", t.url, "--token", TOKENS.service.token, "unplug"], { input: "{nope" });
    expect(JSON.parse(notJson.stdout).error.code).toBe("BAD_USER_INPUT");
    const forbidden = await osacc("unplug", { instance }, TOKENS.member.token);
    expect(forbidden.code).toBe(1);
    expect(JSON.parse(forbidden.stdout).error.code).toBe("FORBIDDEN");
  });
});
