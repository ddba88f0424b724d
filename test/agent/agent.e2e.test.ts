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

  it("shows what the agent-driver and database-model specs add: spec trait names, every control path of a card", async () => {
    const q = `{ devices(filter: { hostname: "compute1", type: FPGA }) { nodes { vendor controlPath { info } controlPaths { uuid type info } } } }`;
    const xilinx = (await t.ok("admin", q)).devices.nodes.find((d: any) => d.vendor === "10ee");
    expect(xilinx.controlPaths.map((c: any) => c.info.function)).toEqual(["0", "1"]);
    expect(xilinx.controlPaths[0].info).toEqual(xilinx.controlPath.info);
    expect(new Set(xilinx.controlPaths.map((c: any) => c.uuid)).size).toBe(2);
    const rps = (await t.ok("admin", `{ resourceProviders(hostname: "compute1") { resourceClass traits } }`)).resourceProviders;
    const traits = new Set<string>(rps.flatMap((r: any) => r.traits));
    for (const trait of ["CUSTOM_GPU_NVIDIA", "CUSTOM_FPGA_XILINX_5004", "CUSTOM_QAT_INTEL_37C8", "CUSTOM_FPGA_INTEL_REGION_9926AB6D6C925A68AABCA7D84C545738"]) {
      expect(traits).toContain(trait);
    }
    expect([...traits].filter((x) => x.startsWith("CUSTOM_NVIDIA_") || x.includes("PRODUCT_ID"))).toEqual([]);
  });

  it("an HPTS card with nested attributes, reported by a driver, reads back over GraphQL", async () => {
    const hpts: Driver = {
      name: "hpts-test",
      discover: async () => [
        {
          type: "HPTS",
          vendor: "1d9b",
          model: "0400",
          controlPath: { type: "PCI", info: { domain: "0000", bus: "18", device: "00", function: "0" } },
          additionalControlPaths: [{ type: "PCI", info: { domain: "0000", bus: "18", device: "00", function: "1" } }],
          deployables: [
            {
              name: "compute1_0000:18:00.0",
              numAccelerators: 1,
              attributes: [
                { key: "rc", value: "CUSTOM_HPTS" },
                { key: "trait0", value: "CUSTOM_HPTS_FACEBOOK_0400" },
                { key: "clock", value: "ptp" },
                { key: "clock.accuracy_ns", value: "100", parentKey: "clock" },
              ],
              attachHandles: [{ type: "PCI", info: { domain: "0000", bus: "18", device: "00", function: "0" } }],
            },
          ],
        },
      ],
    };
    drivers["hpts-test"] = hpts;
    try {
      const s = await reportOnce({ ...opts, drivers: [...ALL, "hpts-test"] });
      expect(s).toMatchObject({ added: 1 });
    } finally {
      delete drivers["hpts-test"];
    }
    const q = `{ devices(filter: { hostname: "compute1", type: HPTS }) { nodes { type controlPaths { info } deployables { attributes { uuid key value parentUuid } } } } }`;
    const [card] = (await t.ok("admin", q)).devices.nodes;
    expect(card.type).toBe("HPTS");
    expect(card.controlPaths.map((c: any) => c.info.function)).toEqual(["0", "1"]);
    const attrs = Object.fromEntries(card.deployables[0].attributes.map((a: any) => [a.key, a]));
    expect(attrs["clock.accuracy_ns"].parentUuid).toBe(attrs.clock.uuid);
    expect(attrs.clock.parentUuid).toBeNull();
    const rps = (await t.ok("admin", `{ resourceProviders(hostname: "compute1") { resourceClass total traits } }`)).resourceProviders;
    expect(rps.find((r: any) => r.resourceClass === "CUSTOM_HPTS")).toMatchObject({ total: 1, traits: ["CUSTOM_HPTS_FACEBOOK_0400"] });
    // The next report without the card removes it again, so the tests after this one see the mixed host alone.
    expect(await reportOnce(opts)).toMatchObject({ removed: 1 });
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
