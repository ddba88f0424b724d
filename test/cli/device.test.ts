/** `cyborg-es device taint|untaint|list|show` against a running service. */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { deviceCommand } from "../../src/cli/device.command.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";

describe("cyborg-es device", () => {
  let t: TestService;
  let uuid: string;
  beforeAll(async () => {
    t = await startTestService();
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) });
    uuid = (await t.ok("admin", op.DEVICES)).devices.nodes[0].uuid;
  });
  afterAll(() => t?.close());

  async function run(args: string[], who: keyof typeof TOKENS = "admin"): Promise<string> {
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
    try {
      await deviceCommand().exitOverride().parseAsync([...args, "--url", t.url, "--token", TOKENS[who].token], { from: "user" });
      return lines.join("\n");
    } finally {
      log.mockRestore();
    }
  }

  it("taints and untaints a device, as the token's principal", async () => {
    expect(await run(["taint", uuid, "example.com/burn-in=gpu:NoSchedule", "--reason", "burn-in"])).toBe(`${uuid}: TAINTED, taints example.com/burn-in=gpu:NoSchedule`);
    const shown = JSON.parse(await run(["show", uuid]));
    expect(shown).toMatchObject({ status: "MAINTAINING", taints: [{ key: "example.com/burn-in", value: "gpu", effect: "NoSchedule", by: "admin", reason: "burn-in" }] });
    const table = (await run(["list"])).split("\n");
    expect(table[0]).toMatch(/^UUID +HOST +TYPE +STATUS +STATE +NUMA +LINK +TAINTS$/);
    expect(table.find((l) => l.startsWith(uuid))).toMatch(/compute1 .*MAINTAINING +TAINTED +- +- +example\.com\/burn-in=gpu:NoSchedule$/);
    expect(JSON.parse(await run(["list", "--json"]))).toContainEqual(expect.objectContaining({ uuid, lifecycleState: "TAINTED" }));
    expect(await run(["untaint", uuid, "example.com/burn-in"])).toBe(`${uuid}: AVAILABLE, no taints`);
  });

  it("shows each device's NUMA node and link domain, and its whole topology in show", async () => {
    const topology = { numaNode: 1, pcieRoot: "0000:00:01.0", pcieSwitch: null, linkDomain: "nvlink:0000:03:00.0" };
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1).map((d) => ({ ...d, topology })) });
    expect((await run(["list"])).split("\n").find((l) => l.startsWith(uuid))).toMatch(/ 1 +nvlink:0000:03:00\.0 +-$/);
    expect(JSON.parse(await run(["show", uuid])).topology).toEqual(topology);
  });

  it("passes on the service's refusals", async () => {
    await expect(run(["taint", uuid, "k:Sometimes", "--reason", "x"])).rejects.toThrow(/TaintEffect|Sometimes/);
    await expect(run(["untaint", uuid, "k"])).rejects.toThrow(/carries no taint k/);
    await expect(run(["taint", uuid, "k:NoSchedule", "--reason", "x"], "member")).rejects.toThrow(/roles do not allow Mutation.taintDevice/);
  });
});
