/**
 * The weigher through its front doors: GraphQL hostWeights, GET /weigher/v1/hosts, and the Nova
 * scheduler weigher of contrib/nova loaded into the real Nova's weigher handler (python3-nova,
 * under Debian's Python), against a running service.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEBIAN_PYTHON } from "../support/global-setup.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";

let t: TestService;
const SCRIPT = fileURLToPath(new URL("./nova_weigh.py", import.meta.url));

/** An FPGA region of `handles` handles on `host`, reporting `traits` (a function's, for one already programmed). */
const region = (host: string, handles: number, traits: string[] = []) => [
  {
    type: "FPGA",
    vendor: "0xABCD",
    model: "fake",
    controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
    deployables: [
      {
        name: `${host}_FakeDevice`,
        numAccelerators: handles,
        driverName: "fake",
        attributes: [{ key: "rc", value: "FPGA" }, ...["CUSTOM_FPGA_REGION_FAKE_R1", ...traits].map((value, i) => ({ key: `trait${i}`, value }))],
        attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "TEST_PCI", info: { domain: "0000", bus: "0c", device: "01", function: String(i) } })),
      },
    ],
  },
];

beforeAll(async () => {
  t = await startTestService();
  await t.ok("admin", op.REPORT, { hostname: "small", devices: region("small", 2) });
  await t.ok("admin", op.REPORT, { hostname: "big", devices: region("big", 6) });
  await t.ok("admin", op.REPORT, { hostname: "programmed", devices: region("programmed", 2, ["CUSTOM_FPGA_FUNCTION_ID_FAKE_FA"]) });
  await t.ok("admin", op.REPORT, { hostname: "tiny", devices: region("tiny", 1) });
  await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, {
    p: { name: "fn-a", groups: [{ "resources:FPGA": "2", "trait:CUSTOM_FPGA_REGION_FAKE_R1": "required", "accel:function_id": "fa" }] },
  });
});
afterAll(async () => {
  await t?.close();
});

const HOSTS = ["tiny", "small", "nowhere", "big", "programmed"];

describe("the weigher", () => {
  it("GraphQL ranks hosts: fitting first, then regions already running the function, then free handles; says why a host does not fit", async () => {
    const { hostWeights } = await t.ok("service", `query($n: String!, $h: [String!]) { hostWeights(deviceProfileName: $n, hosts: $h) { hostname weight fits free ready reason } }`, { n: "fn-a", h: HOSTS });
    expect(hostWeights.map((h: any) => [h.hostname, h.weight])).toEqual([
      ["programmed", 1],
      ["big", 2 / 3],
      ["small", 1 / 3],
      ["tiny", 0],
      ["nowhere", 0],
    ]);
    expect(hostWeights[0]).toMatchObject({ fits: true, free: 2, ready: 2, reason: null });
    expect(hostWeights[3]).toMatchObject({ fits: false, free: 1, reason: "no provider on tiny has 2 free FPGA(s) for group 0 (with CUSTOM_FPGA_REGION_FAKE_R1)" });
  });

  it("GET /weigher/v1/hosts answers the same to a token with X-Auth-Token, refuses without one, and names an unknown profile", async () => {
    const url = (q: string) => new URL(`/weigher/v1/hosts?${q}`, t.url);
    const ok = await fetch(url(`device_profile=fn-a&${HOSTS.map((h) => `host=${h}`).join("&")}`), { headers: { "x-auth-token": TOKENS.service.token } });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { device_profile: string; hosts: Array<{ hostname: string }> };
    expect(body.device_profile).toBe("fn-a");
    expect(body.hosts.map((h) => h.hostname)).toEqual(["programmed", "big", "small", "tiny", "nowhere"]);
    expect((await fetch(url("device_profile=fn-a"))).status).toBe(401);
    expect((await fetch(url("device_profile=fn-a"), { headers: { "x-auth-token": TOKENS.member.token } })).status).toBe(403);
    const missing = await fetch(url("device_profile=nope"), { headers: { "x-auth-token": TOKENS.service.token } });
    expect(missing.status).toBe(404);
    expect(JSON.parse(((await missing.json()) as { error_message: string }).error_message)).toMatchObject({ code: "NOT_FOUND", faultstring: 'no device profile named "nope"' });
    const noProfile = await fetch(url(""), { headers: { "x-auth-token": TOKENS.service.token } });
    expect(noProfile.status).toBe(400);
  });

  it("Nova's weigher handler, loading the weigher from [filter_scheduler] weight_classes, orders the hosts as the service ranks them", async () => {
    const out = await novaWeigh({ url: new URL(t.url).origin, token: TOKENS.service.token, profile: "fn-a", hosts: HOSTS });
    expect(out.weighers).toEqual(["AcceleratorWeigher"]);
    expect(out.order.slice(0, 3)).toEqual([
      ["programmed", 1],
      ["big", 2 / 3],
      ["small", 1 / 3],
    ]);
    expect(out.order.slice(3).map(([, w]) => w)).toEqual([0, 0]);
    // A flavor without a device profile: every host weighs the same, in the order Nova had them.
    const none = await novaWeigh({ url: new URL(t.url).origin, token: TOKENS.service.token, profile: null, hosts: HOSTS });
    expect(none.order).toEqual(HOSTS.map((h) => [h, 0]));
  }, 120_000);
});

function novaWeigh(spec: unknown): Promise<{ weighers: string[]; order: Array<[string, number]> }> {
  return new Promise((resolve, reject) => {
    const env = { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", LANG: "C.UTF-8" };
    const child = spawn(DEBIAN_PYTHON, [SCRIPT], { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 110_000);
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`nova_weigh.py exited with ${code}:\n${err.slice(-3000)}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`nova_weigh.py printed no JSON:\n${out.slice(0, 2000)}\n${err.slice(-2000)}`));
      }
    });
    child.stdin.end(JSON.stringify(spec));
  });
}
