/**
 * The commands that talk to a running service, as a user runs them: they find it as the agent does
 * (--url, CYBORG_URL, then PORT and HOST) and name the URL they could not reach; they take tokens
 * from a file or the environment and explain a refused token in the command line's terms; they
 * print tables for people and JSON with --json. Bare `cyborg-es` prints help and writes nothing.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../bench/lib/redis-server.js";
import { formatTable } from "../../src/cli/table.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import { buildCli, runCli, type BuiltCli } from "../support/cli.js";

// Each test spawns the command line a few times: node's start is slow on a shared machine.
vi.setConfig({ testTimeout: 120_000 });

let built: BuiltCli;
let svc: TestService;
let dir: string;
let where: Record<string, string>;

/** The environment of a shell beside the service: its PORT and HOST, and nothing else of ours. */
const clean = (env: Record<string, string> = {}) => {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(CYBORG_|PORT$|HOST$|DATA_DIR$|AUTH_TOKENS_FILE$)/.test(k)) base[k] = v;
  return { ...base, LOG_LEVEL: "silent", ...env };
};
const cli = (args: string[], env?: Record<string, string>) => runCli(built.cli, args, { env: clean(env) });

beforeAll(async () => {
  built = await buildCli();
  svc = await startTestService();
  dir = mkdtempSync(join(tmpdir(), "cyborg-es-cli-service-"));
  where = { PORT: new URL(svc.url).port, HOST: "127.0.0.1" };
  writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens: [{ name: "nova", token: TOKENS.service.token, roles: ["service"] }, { name: "admin", token: TOKENS.admin.token, roles: ["admin"] }] }));
  writeFileSync(join(dir, "admin.token"), `${TOKENS.admin.token}\n`);
}, 60_000);

afterAll(async () => {
  await svc?.close();
  await built?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("cyborg-es with no command", () => {
  it("prints its help and starts nothing (no ./data written)", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cyborg-es-bare-"));
    const { spawnSync } = await import("node:child_process");
    const r = spawnSync(process.execPath, [built.cli], { cwd, env: clean(), encoding: "utf8", timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("Usage: cyborg-es");
    expect(r.stdout).toMatch(/serve (\[options\] +)?run the service/);
    expect(readdirSync(cwd)).toEqual([]);
    rmSync(cwd, { recursive: true, force: true });
  });
});

describe("finding the service", () => {
  it("from PORT and HOST, as the agent and npm start do", async () => {
    const r = await cli(["profile", "list", "--token-file", join(dir, "admin.token")], where);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("no device profiles");
  });

  it("names the URL it could not reach, whichever way it was given", async () => {
    const port = String(await freePort());
    const [byPort, upload, osacc] = await Promise.all([
      cli(["bitstream", "list", "--token", "t"], { PORT: port }),
      cli(["bitstream", "upload", join(dir, "admin.token"), "--token", "t"], { CYBORG_URL: `http://127.0.0.1:${port}/graphql` }),
      cli(["os-acc", "--hostname", "compute1", "initialize", "--json", "{}", "--token", "t"], { PORT: port }),
    ]);
    expect(byPort.code).toBe(1);
    expect(byPort.stderr).toContain(`cannot reach http://127.0.0.1:${port}/graphql`);
    expect(upload.stderr).toContain(`cannot reach http://127.0.0.1:${port}/bitstreams`);
    expect(osacc.code).toBe(1);
    expect(JSON.parse(osacc.stdout).error.message).toContain(`cannot reach http://127.0.0.1:${port}/graphql`);
  });
});

describe("tokens", () => {
  it("a wrong token is explained in the command line's terms", async () => {
    const r = await cli(["profile", "list", "--token", "not-a-token"], where);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the service at http://127.0.0.1:${where.PORT}/graphql does not know this token`);
    expect(r.stderr).toContain("--token-file");
    expect(r.stderr).toContain("jq -r '.tokens[0].token' data/tokens.json");
    expect(r.stderr).not.toContain("Authorization");
    const osacc = await cli(["os-acc", "--hostname", "compute1", "initialize", "--json", "{}", "--token", "not-a-token"], where);
    expect(JSON.parse(osacc.stdout).error).toMatchObject({ code: "UNAUTHENTICATED", message: expect.stringContaining("--token-file") });
  });

  it("with none, says where tokens come from", async () => {
    const r = await cli(["bitstream", "list"], { ...where, DATA_DIR: "/srv/cyborg" });
    expect(r.stderr).toContain("no token: pass --token-file <file>, set CYBORG_TOKEN");
    expect(r.stderr).toContain("/srv/cyborg/tokens.json");
  });

  it("from a file (one token, or the service's tokens.json by role), or CYBORG_TOKEN; the command line wins", async () => {
    const tokens = join(dir, "tokens.json");
    const [fromJson, fromEnv, fromEnvFile, cliWins, missing] = await Promise.all([
      // bitstream list needs an admin: the admin's entry is taken from tokens.json, not the first.
      cli(["bitstream", "list", "--token-file", tokens], where),
      cli(["bitstream", "list"], { ...where, CYBORG_TOKEN: TOKENS.admin.token }),
      cli(["bitstream", "list"], { ...where, CYBORG_TOKEN_FILE: tokens }),
      // A file on the command line wins over a wrong token in the environment.
      cli(["bitstream", "list", "--token-file", tokens], { ...where, CYBORG_TOKEN: "wrong" }),
      cli(["bitstream", "list", "--token-file", join(dir, "nope")], where),
    ]);
    for (const r of [fromJson, fromEnv, fromEnvFile, cliWins]) expect(r.stdout.trim(), r.stderr).toBe("no bitstreams");
    expect(missing.stderr).toContain(`cannot read the token file ${join(dir, "nope")}: ENOENT`);
  });
});

describe("output", () => {
  it("tables for people, JSON with --json", async () => {
    await svc.ok("admin", "mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }", { p: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    const table = await cli(["profile", "list", "--token-file", join(dir, "admin.token")], where);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+UUID\s+VERSION\s+ENABLED\s+GROUPS$/);
    expect(lines[1]).toMatch(/^fpga-1\s+[0-9a-f-]{36}\s+1\s+true\s+1$/);
    expect(table.stdout).not.toContain("(index)");
    expect(table.stdout).not.toContain("'");
    const json = await cli(["profile", "list", "--json", "--token-file", join(dir, "admin.token")], where);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ name: "fpga-1", version: 1 })]);

    const status = await cli(["projections", "status", "--token-file", join(dir, "admin.token")], where);
    expect(status.stdout.split("\n")[0]).toMatch(/^PROJECTION\s+STATE\s+CHECKPOINT\s+HEAD\s+LAG_EVENTS\s+LAG_MS\s+ERROR$/);
    expect(status.stdout).toMatch(/\narqs\s+live\s+\d+/);
  });

  it("agent --drivers fake discover takes the parent's --drivers", async () => {
    const r = await cli(["agent", "--drivers", "fake", "discover"]);
    expect(r.stdout.split("\n")[0]).toMatch(/^TYPE\s+VENDOR\s+MODEL\s+ADDRESS\s+DEPLOYABLE/);
    expect(r.stdout).toMatch(/\nFPGA\s+/);
    const own = await cli(["agent", "discover", "--drivers", "fake", "--json"]);
    expect(JSON.parse(own.stdout).devices[0].type).toBe("FPGA");
  });

  it("formats cells without quotes, with - for nothing", () => {
    expect(formatTable([{ name: "a", lagMs: 0, error: null }, { name: "longer", lagMs: 12, error: "x y" }])).toBe(
      ["NAME    LAG_MS  ERROR", "a       0       -", "longer  12      x y"].join("\n"),
    );
  });
});
