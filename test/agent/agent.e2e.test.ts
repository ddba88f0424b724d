import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { reportOnce, type AgentOptions } from "../../src/clients/agent/agent.js";
import type { Driver } from "../../src/clients/agent/drivers/driver.js";
import { drivers } from "../../src/clients/agent/drivers/index.js";
import { createLogger } from "../../src/infra/logger.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import { fixtureEnv } from "./drivers/fixture-env.js";

const ALL = ["nvidia-gpu", "intel-fpga", "xilinx-fpga", "intel-qat"];
const TREE = `{ devices(filter: { hostname: "compute1" }) { totalCount nodes { type vendor controlPath { info }
  deployables { name rpUuid attachHandles { type inUse } } } } }`;

/** The agent, end to end, against a running embedded server with the mixed-host fixture. */
describe("cyborg-es agent --once", () => {
  let t: TestService;
  let opts: AgentOptions;
  beforeAll(async () => {
    t = await startTestService();
    opts = {
      client: { url: t.url, token: TOKENS.agent.token },
      hostname: "compute1",
      drivers: ALL,
      env: fixtureEnv("mixed-host", { config: { nvidia: { enabledVgpuTypes: ["nvidia-223", "nvidia-472"] } } }),
      intervalMs: 60_000,
      log: createLogger("silent"),
      retries: 0,
      lastGood: new Map(),
    };
  });
  afterAll(() => t?.close());

  it("reports a mixed host; the device tree and resource providers appear", async () => {
    const s = await reportOnce(opts);
    expect(s.driverErrors).toEqual([]);
    expect(s.added).toBe(s.devices);
    expect(s.devices).toBeGreaterThanOrEqual(6);
    const tree = (await t.ok("admin", TREE)).devices;
    expect(tree.totalCount).toBe(s.devices);
    expect(new Set(tree.nodes.map((d: any) => d.type))).toEqual(new Set(["GPU", "FPGA", "QAT"]));
    const rps = (await t.ok("admin", `{ resourceProviders(hostname: "compute1") { name resourceClass total traits } }`)).resourceProviders;
    const classes = new Set(rps.map((r: any) => r.resourceClass));
    for (const rc of ["PGPU", "FPGA", "CUSTOM_QAT"]) expect(classes).toContain(rc);
    expect(rps.find((r: any) => r.resourceClass === "PGPU").traits).toContain("OWNER_CYBORG");
  });

  it("a second identical report writes no event and is only confirmed: the devices are not sent again", async () => {
    const before = await t.service.store.headPosition();
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    try {
      const s = await reportOnce(opts);
      expect(s).toMatchObject({ added: 0, updated: 0, removed: 0, unchanged: s.devices });
      const sent = fetchSpy.mock.calls.map(([, init]) => JSON.parse(String(init?.body)).query as string);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toContain("confirmHostInventory");
    } finally {
      fetchSpy.mockRestore();
    }
    expect(await t.service.store.headPosition()).toBe(before);
  });

  it("a driver that fails keeps its devices (sent as stubs) instead of removing them", async () => {
    const before = (await t.ok("admin", TREE)).devices.totalCount;
    const broken: Driver = { name: "intel-qat", discover: async () => Promise.reject(new Error("sysfs unreadable")) };
    const original = drivers["intel-qat"]!;
    drivers["intel-qat"] = broken;
    try {
      const s = await reportOnce(opts);
      expect(s.driverErrors.map((e) => e.driver)).toEqual(["intel-qat"]);
      expect(s.removed).toBe(0);
    } finally {
      drivers["intel-qat"] = original;
    }
    expect((await t.ok("admin", TREE)).devices.totalCount).toBe(before);
  });

  it("a device that is gone disappears", async () => {
    const before = (await t.ok("admin", TREE)).devices.nodes;
    const s = await reportOnce({ ...opts, drivers: ALL.filter((d) => d !== "intel-qat") });
    const qats = before.filter((d: any) => d.type === "QAT").length;
    expect(qats).toBeGreaterThan(0);
    expect(s.removed).toBe(qats);
    const after = (await t.ok("admin", TREE)).devices.nodes;
    expect(after.filter((d: any) => d.type === "QAT")).toEqual([]);
  });

  it("an agent token for another host is refused", async () => {
    await expect(reportOnce({ ...opts, hostname: "compute2" })).rejects.toThrow(/compute1|FORBIDDEN|allow/);
  });
});
