/**
 * The device profile lifecycle through the front doors: GraphQL (versions, enable/disable,
 * rename, migrations, inline profiles), REST (Cyborg's shape: current groups, no PATCH), and the
 * `cyborg-es profile` command against the running service.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { profileCommand } from "../../src/cli/profile.command.js";
import { restClient } from "../rest/support.js";
import { startTestService, TOKENS, type TestService } from "./harness.js";
import { CREATE_ARQS, CREATE_PROFILE } from "./operations.js";

let t: TestService;
const dir = mkdtempSync(join(tmpdir(), "cyborg-es-profiles-"));
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const PROFILE = `query($name: String!, $version: Int) { deviceProfile(name: $name, version: $version) {
  uuid name version enabled groups description versions { version groups migration } } }`;
const UPDATE = `mutation($input: DeviceProfileUpdateInput!) { updateDeviceProfile(input: $input) { uuid version groups } }`;
const ENABLE = `mutation($name: String!, $enabled: Boolean!) { setDeviceProfileEnabled(name: $name, enabled: $enabled) { enabled } }`;
const RENAME = `mutation($name: String!, $newName: String!) { renameDeviceProfile(name: $name, newName: $newName) { uuid name version } }`;
const ARQ = `query($uuid: ID!) { acceleratorRequest(uuid: $uuid) { deviceProfileName deviceProfileVersion group } }`;
const v1 = [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required" }];
const v2 = [{ "resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL_ARRIA10": "required" }];

async function cli(args: string[]): Promise<string> {
  const lines: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
  try {
    await profileCommand().exitOverride().parseAsync([...args, "--url", t.url, "--token", TOKENS.admin.token], { from: "user" });
    return lines.join("\n");
  } finally {
    log.mockRestore();
  }
}

describe("device profile lifecycle over GraphQL and REST", () => {
  it("versions: an update is version 2, version 1 stays readable, ARQs keep their version", async () => {
    await t.ok("admin", CREATE_PROFILE, { input: { name: "life1", groups: v1 } });
    const [old] = (await t.ok("member", CREATE_ARQS, { name: "life1" })).createAcceleratorRequests;
    expect((await t.ok("admin", UPDATE, { input: { name: "life1", groups: v2 } })).updateDeviceProfile).toMatchObject({ version: 2, groups: v2 });
    const now = (await t.ok("member", PROFILE, { name: "life1" })).deviceProfile;
    expect(now).toMatchObject({ version: 2, groups: v2, enabled: true });
    expect(now.versions.map((v: { version: number; groups: unknown }) => [v.version, v.groups])).toEqual([[1, v1], [2, v2]]);
    expect((await t.ok("member", PROFILE, { name: "life1", version: 1 })).deviceProfile).toMatchObject({ version: 1, groups: v1 });
    expect((await t.ok("member", PROFILE, { name: "life1", version: 3 })).deviceProfile).toBeNull();
    expect((await t.ok("member", ARQ, { uuid: old.uuid })).acceleratorRequest).toMatchObject({ deviceProfileVersion: 1, group: v1[0] });
    // REST stays Cyborg's: the current groups, and no PATCH.
    const rest = restClient(t.url);
    const r = await rest.call("admin", "GET", `/v2/device_profiles/${now.uuid}`);
    expect(r.json.device_profile.groups).toEqual(v2);
    expect((await rest.call("admin", "PATCH", `/v2/device_profiles/${now.uuid}`, { body: [] })).status).toBe(405);
  });

  it("refuses updates from a member, and bad groups with the field", async () => {
    expect((await t.gql("member", UPDATE, { input: { name: "life1", groups: v1 } })).errors?.[0]?.extensions?.code).toBe("FORBIDDEN");
    const bad = await t.gql("admin", UPDATE, { input: { name: "life1", groups: [{ "resources:FPGA": "many" }] } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "groups[0].resources:FPGA" });
  });

  it("a disabled profile refuses new ARQs with PROFILE_DISABLED, over GraphQL and REST", async () => {
    await t.ok("admin", CREATE_PROFILE, { input: { name: "life2", groups: v1 } });
    expect((await t.ok("admin", ENABLE, { name: "life2", enabled: false })).setDeviceProfileEnabled.enabled).toBe(false);
    const refused = await t.gql("member", CREATE_ARQS, { name: "life2" });
    expect(refused.errors?.[0]).toMatchObject({ extensions: { code: "PROFILE_DISABLED" }, message: expect.stringMatching(/life2 is disabled/) });
    const r = await restClient(t.url).call("member", "POST", "/v2/accelerator_requests", { body: { device_profile_name: "life2" } });
    expect(r.status).toBe(409);
    expect(r.fault).toMatchObject({ code: "PROFILE_DISABLED" });
    await t.ok("admin", ENABLE, { name: "life2", enabled: true });
    expect((await t.ok("member", CREATE_ARQS, { name: "life2" })).createAcceleratorRequests).toHaveLength(1);
  });

  it("a rename keeps the uuid; the old name is gone from lists and free", async () => {
    const before = (await t.ok("admin", CREATE_PROFILE, { input: { name: "life3", groups: v1 } })).createDeviceProfile;
    const after = (await t.ok("admin", RENAME, { name: "life3", newName: "life3b" })).renameDeviceProfile;
    expect(after).toEqual({ uuid: before.uuid, name: "life3b", version: 1 });
    const names = (await t.ok("member", "{ deviceProfiles { name } }")).deviceProfiles.map((p: { name: string }) => p.name);
    expect(names).toContain("life3b");
    expect(names).not.toContain("life3");
    expect((await t.ok("member", `query($uuid: ID!) { deviceProfile(uuid: $uuid) { name } }`, { uuid: before.uuid })).deviceProfile.name).toBe("life3b");
  });

  it("inline profiles are listed to nobody and go with their last ARQ", async () => {
    const groups = [{ "resources:FPGA": "1", "trait:CUSTOM_INLINE_ONLY": "required" }];
    const [arq] = (await t.ok("service", `mutation($g: [JSON!]!) { createAcceleratorRequestsForGroups(groups: $g) { uuid deviceProfileName } }`, { g: groups }))
      .createAcceleratorRequestsForGroups;
    for (const who of ["admin", "member2"] as const) {
      const names = (await t.ok(who, "{ deviceProfiles { name } }")).deviceProfiles.map((p: { name: string }) => p.name);
      expect(names).not.toContain(arq.deviceProfileName);
    }
    expect((await restClient(t.url).call("admin", "GET", "/v2/device_profiles")).json.device_profiles.map((p: { name: string }) => p.name)).not.toContain(arq.deviceProfileName);
    expect((await t.ok("admin", PROFILE, { name: arq.deviceProfileName })).deviceProfile).toMatchObject({ groups });
    await t.ok("service", `mutation($u: [ID!]!) { deleteAcceleratorRequests(arqUuids: $u) }`, { u: [arq.uuid] });
    expect((await t.ok("admin", PROFILE, { name: arq.deviceProfileName })).deviceProfile).toBeNull();
  });
});

describe("cyborg-es profile (end to end)", () => {
  it("migrate --dry-run lists what would change; migrate applies it as a version; disable and rename", async () => {
    await t.ok("admin", CREATE_PROFILE, { input: { name: "cli1", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_OLD_NAME": "required" }] } });
    const file = join(dir, "mapping.json");
    writeFileSync(file, JSON.stringify({ traits: { CUSTOM_OLD_NAME: "CUSTOM_NEW_NAME" }, resourceClasses: {} }));
    const dry = await cli(["migrate", "--file", file, "--dry-run"]);
    expect(dry).toMatch(/cli1: would be a new version: group 0 trait:CUSTOM_OLD_NAME -> trait:CUSTOM_NEW_NAME/);
    expect(dry).toMatch(/1 profile would change \(dry run: nothing changed\)/);
    expect((await t.ok("admin", PROFILE, { name: "cli1" })).deviceProfile.version).toBe(1);
    expect(await cli(["migrate", "--file", file])).toMatch(/cli1: version 1 -> 2/);
    const migrated = (await t.ok("admin", PROFILE, { name: "cli1" })).deviceProfile;
    expect(migrated.groups).toEqual([{ "resources:FPGA": "1", "trait:CUSTOM_NEW_NAME": "required" }]);
    expect(migrated.versions[1].migration).toEqual({ traits: { CUSTOM_OLD_NAME: "CUSTOM_NEW_NAME" }, resourceClasses: {} });
    expect(await cli(["migrate", "--file", file])).toMatch(/0 profiles migrated/);
    expect(await cli(["disable", "cli1"])).toBe("cli1: disabled");
    expect(await cli(["rename", "cli1", "cli1b"])).toMatch(/cli1 is now cli1b/);
    expect(JSON.parse(await cli(["show", "cli1b", "--version", "1"]))).toMatchObject({ name: "cli1b", version: 1, enabled: false });
  });
});
