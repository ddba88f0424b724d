/**
 * The real OpenStack clients against cyborg-es, from Debian's packages (test/support/global-setup
 * installs them): every `openstack accelerator ...` command of python3-cyborgclient, and Nova's
 * own client module (nova.accelerator.cyborg from python3-nova) through a server's boot. Each
 * client runs as one Python process for a batch of calls (a start costs seconds).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService, type Who } from "../api/harness.js";
import * as op from "../api/operations.js";
import { DEBIAN_PYTHON } from "../support/global-setup.js";

const CLIENTS = fileURLToPath(new URL("./clients/", import.meta.url));

/** Runs a script under Debian's Python with a JSON spec on stdin; resolves its JSON output. */
function python<T>(script: string, spec: unknown, timeoutMs = 90_000): Promise<T> {
  return new Promise((resolve, reject) => {
    // A clean environment: no OS_* settings, no other Python's paths.
    const env = { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", LANG: "C.UTF-8" };
    const child = spawn(DEBIAN_PYTHON, [CLIENTS + script], { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`${script} exited with ${code}:\n${err.slice(-3000)}`));
      try {
        resolve(JSON.parse(out) as T);
      } catch {
        reject(new Error(`${script} printed no JSON:\n${out.slice(0, 2000)}\n${err.slice(-2000)}`));
      }
    });
    child.stdin.end(JSON.stringify(spec));
  });
}

interface CliResult {
  id: string;
  argv: string[];
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

let t: TestService;
let endpoint: string;
let rp: string;

beforeAll(async () => {
  t = await startTestService();
  endpoint = t.url.replace(/\/graphql$/, "/v2");
  await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(8) });
  rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
});
afterAll(() => t?.close());

describe("the openstack accelerator CLI (python3-cyborgclient)", () => {
  it("runs every command against cyborg-es", { timeout: 120_000 }, async () => {
    const instance = randomUUID();
    const cmd = (id: string, who: Who, ...argv: string[]) => ({ id, token: TOKENS[who].token, argv });
    const json = ["-f", "json"];
    const commands = [
      cmd("dp", "admin", "accelerator", "device", "profile", "create", "cli-fpga", '[{"resources:FPGA": 1, "trait:CUSTOM_FAKE_DEVICE": "required"}]', "--description", "from the CLI", ...json),
      cmd("dp-list", "reader", "accelerator", "device", "profile", "list", "--long", ...json),
      cmd("dp-show", "reader", "accelerator", "device", "profile", "show", "{dp.uuid}", ...json),
      cmd("dp-show-name", "reader", "--os-accelerator-api-version", "2.2", "accelerator", "device", "profile", "show", "cli-fpga", ...json),
      cmd("dp-show-name-2.0", "reader", "--os-accelerator-api-version", "2.0", "accelerator", "device", "profile", "show", "cli-fpga", ...json),
      cmd("dp-create-member", "member", "accelerator", "device", "profile", "create", "not-mine", '[{"resources:FPGA": 1}]', ...json),
      cmd("dev-list", "admin", "--os-accelerator-api-version", "2.3", "accelerator", "device", "list", ...json),
      cmd("dev-show", "manager", "accelerator", "device", "show", "{dev-list.uuid}", ...json),
      cmd("dep-list", "admin", "accelerator", "deployable", "list", ...json),
      cmd("dep-show", "manager", "accelerator", "deployable", "show", "{dep-list.uuid}", ...json),
      cmd("dev-list-member", "member", "accelerator", "device", "list", ...json),
      cmd("arq", "member", "accelerator", "arq", "create", "cli-fpga", ...json),
      cmd("arq-list", "member", "accelerator", "arq", "list", "--long", ...json),
      cmd("arq-show", "member", "accelerator", "arq", "show", "{arq.uuid}", ...json),
      cmd("arq-bind-member", "member", "accelerator", "arq", "bind", "{arq.uuid}", "compute1", instance, rp, "p1", ...json),
      cmd("arq-bind", "service", "accelerator", "arq", "bind", "{arq.uuid}", "compute1", instance, rp, "p1", ...json),
      cmd("arq-delete-member", "member", "accelerator", "arq", "delete", "{arq.uuid}"),
      cmd("arq-unbind", "service", "accelerator", "arq", "unbind", "{arq.uuid}", ...json),
      cmd("arq-delete", "member", "accelerator", "arq", "delete", "{arq.uuid}"),
      cmd("arq-show-gone", "member", "accelerator", "arq", "show", "{arq.uuid}", ...json),
      cmd("dp-delete", "admin", "accelerator", "device", "profile", "delete", "{dp.uuid}"),
      cmd("dp-list-after", "reader", "accelerator", "device", "profile", "list", ...json),
    ];
    const results = await python<CliResult[]>("osc.py", { endpoint, commands });
    const r = Object.fromEntries(results.map((x) => [x.id, x]));
    const ok = (id: string) => {
      expect(r[id]!.code, `${id}: ${r[id]!.stderr}`).toBe(0);
      return r[id]!.json;
    };
    const failed = (id: string, message: RegExp) => {
      expect(r[id]!.code, `${id} should fail`).not.toBe(0);
      expect(r[id]!.stderr).toMatch(message);
    };

    const dp = ok("dp");
    expect(dp).toMatchObject({ name: "cli-fpga", description: "from the CLI", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] });
    expect(ok("dp-list").find((p: any) => p.uuid === dp.uuid)).toMatchObject({ name: "cli-fpga", created_at: expect.stringMatching(/\+00:00$/), updated_at: null });
    expect(ok("dp-show")).toMatchObject({ uuid: dp.uuid, updated_at: "None" });
    expect(ok("dp-show-name").uuid).toBe(dp.uuid);
    failed("dp-show-name-2.0", /microversion 2\.2.*406|406/s);
    failed("dp-create-member", /403.*device_profile:write/);

    const [device] = ok("dev-list");
    expect(device).toMatchObject({ type: "FPGA", vendor: "0xABCD", hostname: "compute1" });
    expect(ok("dev-show")).toMatchObject({ uuid: device.uuid, model: "miss model info" });
    const [deployable] = ok("dep-list");
    expect(deployable).toMatchObject({ name: "compute1_FakeDevice", device_id: device.uuid });
    expect(ok("dep-show")).toMatchObject({ uuid: deployable.uuid, name: "compute1_FakeDevice" });
    failed("dev-list-member", /403/);

    const arq = ok("arq");
    expect(arq).toMatchObject({ state: "Initial", device_profile_name: "cli-fpga", attach_handle_type: "", attach_handle_info: {} });
    expect(ok("arq-list").map((a: any) => a.uuid)).toContain(arq.uuid);
    expect(ok("arq-show")).toMatchObject({ uuid: arq.uuid, state: "Initial" });
    failed("arq-bind-member", /403.*service token/);
    expect(ok("arq-bind")).toMatchObject({ uuid: arq.uuid, state: "Bound", hostname: "compute1", device_rp_uuid: rp, instance_uuid: instance, attach_handle_type: "TEST_PCI" });
    expect(Object.keys(ok("arq-bind").attach_handle_info).sort()).toEqual(["bus", "device", "domain", "function"]);
    failed("arq-delete-member", /service token/);
    expect(ok("arq-unbind")).toMatchObject({ state: "Unbound", hostname: null, instance_uuid: null, attach_handle_type: "", attach_handle_info: {} });
    expect(r["arq-delete"]!.stdout).toMatch(/Deleted accelerator_request/);
    ok("arq-delete");
    failed("arq-show-gone", /not found/);
    expect(r["dp-delete"]!.stdout).toMatch(/Deleted device_profile/);
    expect((ok("dp-list-after") ?? []).map((p: any) => p.name)).not.toContain("cli-fpga");
  });
});

describe("Nova's Cyborg client (nova.accelerator.cyborg from python3-nova)", () => {
  it("boots a server: profile groups, ARQs, one bind PATCH, resolved ARQs with handles, delete by instance", { timeout: 120_000 }, async () => {
    // Nova with [service_user] send_service_user_token = true (auth_type admin_token, a service token of the token file).
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "nova-fpga", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }, { "resources:FPGA": "1" }] } });
    const instance = randomUUID();
    // A GraphQL listener sees the binds Nova makes over REST.
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    const out = await python<any>("nova_flow.py", {
      endpoint,
      // As in a cloud: the user's Keystone token, which cyborg-es cannot check; Nova's service token vouches for it.
      user_token: "gAAAAABkeystone-user-token-0123456789",
      service_token: TOKENS.service.token,
      profile: "nova-fpga",
      hostname: "compute1",
      rp,
      instance,
    });
    expect(out.request_groups).toEqual([
      { requester_id: "device_profile_0", resources: { FPGA: 1 }, traits: ["CUSTOM_FAKE_DEVICE"] },
      { requester_id: "device_profile_1", resources: { FPGA: 1 }, traits: [] },
    ]);
    const uuids = out.created.map((a: any) => a.uuid).sort();
    expect(out.created.map((a: any) => [a.group, a.state])).toEqual([
      [0, "Initial"],
      [1, "Initial"],
    ]);
    expect(out.resolved.map((a: any) => a.uuid).sort()).toEqual(uuids);
    for (const a of [...out.resolved, ...out.by_uuid]) {
      expect(a).toMatchObject({ state: "Bound", hostname: "compute1", device_rp_uuid: rp, instance_uuid: instance, project_id: "service", attach_handle_type: "TEST_PCI" });
      expect(a.attach_handle_info).toMatchObject({ domain: "0000", bus: "0c" });
    }
    expect(out.uuids_for_instance).toEqual(uuids);
    expect(out.after_delete).toEqual({ status: 200, body: { arqs: [] } });
    expect(out.unbound_after_delete).toEqual([404, 404]);

    const events = (await sub.next(2)).map((e) => e.acceleratorRequestBound);
    sub.unsubscribe();
    expect(events.map((e) => e.tag).sort()).toEqual(uuids);
    for (const e of events) expect(e).toMatchObject({ name: "accelerator-request-bound", serverUuid: instance, status: "COMPLETED" });
  });
});
