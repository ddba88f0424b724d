import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wantsYoungGeneration } from "../../src/cli/young-generation.js";
import { startTestService } from "../api/harness.js";
import { buildCli, runCli, type BuiltCli } from "../support/cli.js";
import { startRedis, type TestRedis } from "../support/redis.js";

describe("the replaying commands' young generation", () => {
  it("relaunches replay and projections rebuild, not the other commands", () => {
    expect(wantsYoungGeneration(["replay", "--until", "100"], [], {})).toBe(true);
    expect(wantsYoungGeneration(["projections", "rebuild", "--name", "arqs"], [], {})).toBe(true);
    for (const args of [["serve"], [], ["projections", "status"], ["audit", "verify"], ["audit", "export"], ["os-acc", "plug"]]) {
      expect(wantsYoungGeneration(args, [], {}), args.join(" ")).toBe(false);
    }
  });

  it("not when node has the flag already (argv or NODE_OPTIONS), nor when node's defaults are asked for", () => {
    expect(wantsYoungGeneration(["replay"], ["--max-semi-space-size=32"], {})).toBe(false);
    expect(wantsYoungGeneration(["replay"], [], { NODE_OPTIONS: "--max-semi-space-size=64" })).toBe(false);
    expect(wantsYoungGeneration(["replay"], [], { CYBORG_ES_NODE_DEFAULTS: "1" })).toBe(false);
  });
});

describe("cyborg-es replay, started again with the flag", () => {
  let built: BuiltCli;
  let redis: TestRedis;
  const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-young-"));
  beforeAll(async () => {
    [built, redis] = await Promise.all([buildCli(), startRedis()]);
    const t = await startTestService({ dataDir });
    await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    await t.close();
  });
  afterAll(async () => {
    await built?.remove();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("passes its output and its exit code through: a replay, then a refused point", async () => {
    const env = { DATA_DIR: dataDir, REDIS_URL: "", LOG_LEVEL: "silent" };
    const ok = await runCli(built.cli, ["replay", "--until", "100", "--into", `${redis.url}/3`], { env });
    expect(ok.stderr).toMatch(/replayed \d+ events up to position \d+ into redis:/);
    expect(ok.code).toBe(0);
    const bad = await runCli(built.cli, ["replay", "--until", "not-a-point", "--into", `${redis.url}/3`], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--until/);
  });
});
