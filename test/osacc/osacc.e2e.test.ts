/**
 * os-acc end to end: a running service, the host agent (the fake driver) reporting two hosts, and
 * os-acc as a compute node calls it.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { createLogger } from "../../src/infra/logger.js";
import { AgentUnavailable, BindFailed, OsAcc, UnsupportedOperation, type SelectedRp } from "../../src/clients/osacc/index.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import { fixtureEnv } from "../agent/drivers/fixture-env.js";

let t: TestService;
let acc: OsAcc;
const rp: Record<string, SelectedRp> = {};

const report = (hostname: string, token: string) =>
  reportOnce({ client: { url: t.url, token }, hostname, drivers: ["fake"], env: fixtureEnv("no-accelerators", { hostname }), intervalMs: 60_000, log: createLogger("silent"), retries: 0, lastGood: new Map() });

async function handlesInUse(hostname: string): Promise<number> {
  const { devices } = await t.ok("admin", `query($h: String) { devices(filter: { hostname: $h }) { nodes { deployables { attachHandles { inUse } } } } }`, { h: hostname });
  return devices.nodes.flatMap((d: any) => d.deployables.flatMap((x: any) => x.attachHandles)).filter((h: any) => h.inUse).length;
}
const arqsOf = async (instance: string) => (await t.ok("service", `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { uuid state hostname } } }`, { i: instance })).acceleratorRequests.nodes;
const vm = (project = "p1") => ({ uuid: randomUUID(), name: "vm", project });

beforeAll(async () => {
  t = await startTestService();
  acc = new OsAcc({ url: t.url, token: TOKENS.service.token, hostname: "compute1", bindTimeoutMs: 30_000 });
  await t.ok("admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
});
afterAll(async () => {
  await acc?.close();
  await t?.close();
});

describe("os-acc", () => {
  it("initialize waits for the host's agent: AgentUnavailable before its first report, ready once it reported", async () => {
    await expect(acc.initialize("compute1", { timeoutMs: 300, pollMs: 50 })).rejects.toBeInstanceOf(AgentUnavailable);
    const waiting = acc.initialize("compute1", { timeoutMs: 20_000, pollMs: 50 });
    await report("compute1", TOKENS.agent.token);
    await report("compute2", TOKENS.admin.token);
    await expect(waiting).resolves.toBeUndefined();
    for (const host of ["compute1", "compute2"]) {
      rp[host] = { uuid: (await t.ok("service", `query($h: String) { resourceProviders(hostname: $h) { uuid } }`, { h: host })).resourceProviders[0].uuid, hostname: host };
    }
  });

  it("plugs with a device profile name, as Nova names it, and returns what to attach", async () => {
    const instance = vm();
    const [a, ...rest] = await acc.plug(instance, rp.compute1!, { "accel:device_profile": "fpga-1" });
    expect(rest).toEqual([]);
    expect(a).toMatchObject({ attachHandleType: "TEST_PCI", pciId: expect.stringMatching(/^0000:0c:0[0-9]\.[0-7]$/) });
    expect(a!.hostdevXml).toContain(`bus='0x0c'`);
    expect((await arqsOf(instance.uuid)).map((x: any) => x.state)).toEqual(["BOUND"]);
    expect(await acc.unplug(instance)).toBe(1);
  });

  it("accel:attach_target decides what is attached: host gives the device's address without a <hostdev>, none nothing; the ARQ says which", async () => {
    for (const [target, expected] of [
      ["host", { attachTarget: "host", pciId: expect.stringMatching(/^0000:0c:/), hostdevXml: null }],
      ["none", { attachTarget: "none", hostdevXml: null }],
    ] as const) {
      const instance = vm();
      const [a] = await acc.plug(instance, rp.compute1!, { "resources:FPGA": "1", "accel:attach_target": target });
      expect(a).toMatchObject(expected);
      if (target === "none") expect(a!.pciId).toBeUndefined();
      const arqs = (await t.ok("service", `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }) { nodes { state attachTarget } } }`, { i: instance.uuid })).acceleratorRequests.nodes;
      expect(arqs).toEqual([{ state: "BOUND", attachTarget: target }]);
      expect(await acc.unplug(instance)).toBe(1);
    }
  });

  it("plugs two accelerators from inline specs; plug and unplug are idempotent", async () => {
    const instance = vm();
    const before = await handlesInUse("compute1");
    const specs = { "resources:FPGA": "2", "trait:CUSTOM_FAKE_DEVICE": "required", "hw:cpu_policy": "dedicated" };
    const first = await acc.plug(instance, { uuid: rp.compute1!.uuid }, specs);
    expect(first).toHaveLength(2);
    expect(new Set(first.map((x) => x.pciId)).size).toBe(2);
    const again = await acc.plug(instance, { uuid: rp.compute1!.uuid }, specs);
    expect(again).toEqual(first);
    expect(await arqsOf(instance.uuid)).toHaveLength(2);
    expect(await handlesInUse("compute1")).toBe(before + 2);
    expect(await acc.unplug(instance)).toBe(2);
    expect(await acc.unplug(instance)).toBe(0);
    expect(await handlesInUse("compute1")).toBe(before);
  });

  it("a plug that fails half-way releases what it took", async () => {
    const big = vm();
    const free = 16 - (await handlesInUse("compute1"));
    await acc.plug(big, rp.compute1!, { "resources:FPGA": String(free - 1) });
    const late = vm();
    const failure = await acc.plug(late, rp.compute1!, { "resources:FPGA": "2" }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(BindFailed);
    expect((failure as BindFailed).reasons).toEqual([expect.objectContaining({ reason: expect.stringMatching(/No free attach handle/) })]);
    expect(await arqsOf(late.uuid)).toEqual([]);
    expect(await handlesInUse("compute1")).toBe(16 - 1);
    expect(await acc.unplug(big)).toBe(free - 1);
  });

  it("follows the seed's table for every instance operation, and records each in the instance's history", async () => {
    const instance = vm();
    const specs = { "accel:device_profile": "fpga-1" };
    await acc.plug(instance, rp.compute1!, specs);
    for (const op of ["pause", "unpause", "suspend", "resume", "lock", "unlock", "reboot", "rebuild", "set-password", "trigger-crash-dump"]) {
      expect(await acc.operation(instance, op)).toEqual({ operation: op, effect: "keep", released: 0, plugged: null });
    }
    expect((await arqsOf(instance.uuid)).map((x: any) => x.state)).toEqual(["BOUND"]);
    for (const op of ["live-migrate", "boot-from-snapshot"]) await expect(acc.operation(instance, op)).rejects.toBeInstanceOf(UnsupportedOperation);

    // Resize and cold migration move the instance: freed on compute1, plugged again on compute2.
    for (const [op, from, to] of [["resize", "compute1", "compute2"], ["cold-migrate", "compute2", "compute1"], ["evacuate", "compute1", "compute2"]] as const) {
      const moved = await acc.operation(instance, op, { selectedRp: rp[to]!, extraSpecs: specs });
      expect(moved).toMatchObject({ operation: op, effect: "move", released: 1, plugged: [expect.objectContaining({ attachHandleType: "TEST_PCI" })] });
      expect((await arqsOf(instance.uuid)).map((x: any) => x.hostname)).toEqual([to]);
      expect(await handlesInUse(from)).toBe(0);
    }
    expect(await acc.operation(instance, "shelve")).toMatchObject({ effect: "release", released: 1, plugged: null });
    expect(await acc.operation(instance, "unshelve", { selectedRp: rp.compute1!, extraSpecs: specs })).toMatchObject({ effect: "plug", released: 0, plugged: [expect.anything()] });
    expect(await acc.operation(instance, "delete")).toMatchObject({ effect: "release", released: 1 });
    expect(await acc.operation(instance, "restore", { selectedRp: rp.compute1!, extraSpecs: specs })).toMatchObject({ effect: "plug", plugged: [expect.anything()] });
    // Stop frees the accelerators; start plugs them again on the instance's host.
    expect(await acc.operation(instance, "stop")).toMatchObject({ effect: "release", released: 1, plugged: null });
    expect(await arqsOf(instance.uuid)).toEqual([]);
    expect(await handlesInUse("compute1")).toBe(0);
    expect(await acc.operation(instance, "start", { selectedRp: rp.compute1!, extraSpecs: specs })).toMatchObject({ effect: "plug", released: 0, plugged: [expect.anything()] });
    expect((await arqsOf(instance.uuid)).map((x: any) => x.state)).toEqual(["BOUND"]);
    await acc.unplug(instance);

    const history = (await t.ok("admin", `query($s: String!) { streamHistory(stream: $s, first: 100) { type data metadata } }`, { s: `instance-${instance.uuid}` })).streamHistory;
    const ops = history.filter((e: any) => e.type === "InstanceOperationRecorded");
    expect(ops.map((e: any) => e.data.operation)).toEqual([
      "pause", "unpause", "suspend", "resume", "lock", "unlock", "reboot", "rebuild", "set-password", "trigger-crash-dump",
      "resize", "cold-migrate", "evacuate", "shelve", "unshelve", "delete", "restore", "stop", "start",
    ]);
    expect(new Set(ops.map((e: any) => e.metadata.principal))).toEqual(new Set(["service"]));
  });
});
