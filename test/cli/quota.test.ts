/** `cyborg-es quota show|set` against a running service. */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseLimit, quotaCommand } from "../../src/cli/quota.command.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";

describe("cyborg-es quota", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ env: { QUOTA_DEFAULTS: '{"FPGA":4}' } });
  });
  afterAll(() => t?.close());

  async function run(args: string[], who: keyof typeof TOKENS = "admin"): Promise<string> {
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
    try {
      await quotaCommand().exitOverride().parseAsync([...args, "--url", t.url, "--token", TOKENS[who].token], { from: "user" });
      return lines.join("\n");
    } finally {
      log.mockRestore();
    }
  }

  it("shows the defaults, sets a project's own limits and puts one back on the default", async () => {
    expect(JSON.parse(await run(["show", "p1", "--json"])).classes).toContainEqual({ resourceClass: "FPGA", limit: 4, own: false, usage: 0 });
    const table = (await run(["set", "p1", "GPU=8", "FPGA=2"])).split("\n");
    expect(table[0]).toMatch(/^CLASS +USAGE +LIMIT +FROM$/);
    expect(table.find((l) => l.startsWith("GPU"))).toMatch(/^GPU +0 +8 +project$/);
    const back = JSON.parse(await run(["set", "p1", "FPGA=default", "--json"]));
    expect(back.classes).toContainEqual({ resourceClass: "FPGA", limit: 4, own: false, usage: 0 });
  });

  it("passes on the service's refusals, and refuses a malformed limit before calling it", async () => {
    await expect(run(["set", "p1", "GPU=1"], "member")).rejects.toThrow(/roles do not allow/);
    await expect(run(["show", "p2"], "member")).rejects.toThrow(/FORBIDDEN|roles do not allow/);
    expect(() => parseLimit("GPU")).toThrow(/CLASS=N/);
  });
});
