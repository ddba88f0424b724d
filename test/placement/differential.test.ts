/**
 * One rule, checked two ways: after every step of a scripted log, the providers the Placement sync
 * asks for (the domain's desiredProviders over each folded host stream) and the built-in
 * `resourceProviders` read model (projections/resource-providers/) show the same uuids, names,
 * parents, classes, totals, reserved amounts and traits. No Placement here: this is what keeps
 * the query that works without Placement honest about what Placement shows.
 */
import { describe, expect, it } from "vitest";
import { fpgaCard, HostWriter } from "../../bench/lib/host-writer.js";
import { name as rpProjection, project } from "../../projections/resource-providers/projection.js";
import { listResourceProviders } from "../../projections/resource-providers/queries.js";
import { desiredProviders } from "../../src/domain/inventory/resource-providers.js";
import { OWNER_CYBORG } from "../../src/domain/shared/traits.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";

const BW = "NET_BW_EGR_KILOBIT_PER_SEC";
/** An SR-IOV NIC: 4 VFs on its PF's provider, and the port's bandwidth as a capacity. */
const nicCard = (kbps: number): DriverDevice => ({
  type: "NIC",
  vendor: "0x8086",
  model: "E810",
  controlPath: { type: "PCI", info: { domain: "0000", bus: "3b", device: "00", function: "0" } },
  capacities: [{ name: "bandwidth", resourceClass: BW, total: kbps, unit: "kbit/s" }],
  deployables: [
    {
      name: "compute1_0000:3b:00.0",
      numAccelerators: 4,
      attributes: [{ key: "rc", value: "SRIOV_NET_VF" }],
      attachHandles: Array.from({ length: 4 }, (_, i) => ({ type: "PCI" as const, info: { domain: "0000", bus: "3b", device: "02", function: String(i) } })),
    },
  ],
});

type Row = { uuid: string; name: string; parent: string; rc: string; total: number; reserved: number; traits: string[]; capacities: Array<{ resourceClass: string; total: number; reserved: number }> };

/** The domain's view: fold each host stream, ask for its providers. */
async function fromDomain(w: HostWriter, hosts: readonly string[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const h of hosts) {
    for (const p of desiredProviders((await w.load(h)).state)) {
      rows.push({ uuid: p.uuid, name: p.name, parent: p.parentName, rc: p.resourceClass, total: p.total, reserved: p.reserved, traits: p.traits, capacities: p.capacities });
    }
  }
  return rows.sort((a, b) => a.uuid.localeCompare(b.uuid));
}

/** The read model's view: the projection applied event by event, then its query. */
async function fromReadModel(es: MemoryEventStore): Promise<Row[]> {
  const rs = new MemoryReadStore();
  for (const e of await es.readAll()) await rs.applyBatch(rpProjection, project(e), e.position);
  return (await listResourceProviders(rs)).map((p) => ({
    uuid: p.uuid,
    name: p.name,
    parent: p.parentProviderName,
    rc: p.resourceClass,
    total: p.total,
    reserved: p.reserved,
    // Placement's traits are a set; the sync adds OWNER_CYBORG to every provider it owns.
    traits: [...new Set([...p.traits, OWNER_CYBORG])].sort(),
    capacities: p.capacities.map(({ resourceClass, total, reserved }) => ({ resourceClass, total, reserved })),
  })).sort((a, b) => a.uuid.localeCompare(b.uuid));
}

describe("desired providers (domain) and the resourceProviders read model", () => {
  it("agree after every step of a scripted log", async () => {
    const es = new MemoryEventStore();
    const w = new HostWriter(es);
    const hosts = ["compute1", "compute2", "compute3"];
    const check = async (step: string) => {
      const [domain, model] = await Promise.all([fromDomain(w, hosts), fromReadModel(es)]);
      expect(domain, step).toEqual(model);
      return domain;
    };

    await w.report("compute1", [fpgaCard("compute1", "5e", { accelerators: 2 }), fpgaCard("compute1", "af")]);
    await w.report("compute2", [fpgaCard("compute2", "5e", { traits: ["CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_FUNCTION_A", "CUSTOM_FPGA_INTEL"] })]);
    expect(await check("first reports")).toHaveLength(3);

    // FPGA reprogrammed: the function trait changes with the attributes.
    await w.report("compute2", [fpgaCard("compute2", "5e", { traits: ["CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_FUNCTION_B"] })]);
    await check("reprogrammed");

    // More accelerators, another class, a trait dropped.
    await w.report("compute1", [fpgaCard("compute1", "5e", { accelerators: 4 }), fpgaCard("compute1", "af", { rc: "CUSTOM_ACCEL", traits: [] })]);
    await check("changed inventory");

    // Maintenance on and off, with an allocation in between.
    const d = await w.deviceAt("compute1", "5e");
    await w.setStatus("compute1", d, "MAINTAINING");
    expect((await check("maintenance")).find((r) => r.name === "compute1_0000:5e:00.0")).toMatchObject({ total: 4, reserved: 4 });
    await w.setStatus("compute1", d, "ENABLED");
    await w.allocate("compute1", rpUuidFor("compute1_0000:5e:00.0"), "arq-1", "vm-1");
    await check("allocated");
    await w.release("compute1", "arq-1");

    // A free device removed; a new host; a host emptied.
    await w.report("compute1", [fpgaCard("compute1", "5e", { accelerators: 4 })]);
    await w.report("compute3", [fpgaCard("compute3", "3b"), fpgaCard("compute3", "3c")]);
    await w.report("compute2", []);
    expect((await check("removals")).map((r) => r.name).sort()).toEqual(["compute1_0000:5e:00.0", "compute3_0000:3b:00.0", "compute3_0000:3c:00.0"]);
  });

  it("agree on a NIC's bandwidth: on the provider of its VFs, reserved with the device, drawn by binds", async () => {
    const es = new MemoryEventStore();
    const w = new HostWriter(es);
    const check = async (step: string) => {
      const [domain, model] = await Promise.all([fromDomain(w, ["compute1"]), fromReadModel(es)]);
      expect(domain, step).toEqual(model);
      return domain;
    };
    const rp = rpUuidFor("compute1_0000:3b:00.0");
    await w.report("compute1", [nicCard(10_000), fpgaCard("compute1", "af")]);
    expect((await check("reported")).find((r) => r.uuid === rp)!.capacities).toEqual([{ resourceClass: BW, total: 10_000, reserved: 0 }]);
    await w.report("compute1", [nicCard(20_000), fpgaCard("compute1", "af")]);
    await check("a new total");
    await w.taint("compute1", await w.deviceAt("compute1", "3b"), "example.com/burn-in", "NoSchedule");
    expect((await check("tainted")).find((r) => r.uuid === rp)!.capacities).toEqual([{ resourceClass: BW, total: 20_000, reserved: 20_000 }]);
    await w.untaint("compute1", await w.deviceAt("compute1", "3b"), "example.com/burn-in");
    await w.run("compute1", { type: "AllocateAttachHandle", data: { hostname: "compute1", rpUuid: rp, arqUuid: "arq-1", instanceUuid: "vm-1", at: new Date().toISOString(), requirements: { resourceClasses: ["SRIOV_NET_VF"], required: [], forbidden: [], amounts: [{ resourceClass: BW, amount: 7_000 }] } } });
    const rs = new MemoryReadStore();
    for (const e of await es.readAll()) await rs.applyBatch(rpProjection, project(e), e.position);
    expect((await listResourceProviders(rs)).find((r) => r.uuid === rp)!.capacities).toEqual([{ resourceClass: BW, total: 20_000, reserved: 0, used: 7_000 }]);
    await w.release("compute1", "arq-1");
    const again = new MemoryReadStore();
    for (const e of await es.readAll()) await again.applyBatch(rpProjection, project(e), e.position);
    expect((await listResourceProviders(again)).find((r) => r.uuid === rp)!.capacities[0]!.used).toBe(0);
    await w.report("compute1", [{ ...nicCard(20_000), capacities: [] }, fpgaCard("compute1", "af")]);
    expect((await check("capacities gone")).every((r) => r.capacities.length === 0)).toBe(true);
  });

  it("agree on a device lost while allocated: reserved = total until released, then gone", async () => {
    const es = new MemoryEventStore();
    const w = new HostWriter(es);
    await w.report("compute1", [fpgaCard("compute1", "5e", { accelerators: 2 }), fpgaCard("compute1", "af")]);
    await w.allocate("compute1", rpUuidFor("compute1_0000:5e:00.0"), "arq-1", "vm-1");
    await w.report("compute1", [fpgaCard("compute1", "af")]);
    const [domain, model] = await Promise.all([fromDomain(w, ["compute1"]), fromReadModel(es)]);
    expect(domain).toEqual(model);
    expect(domain.find((r) => r.name === "compute1_0000:5e:00.0")).toMatchObject({ total: 2, reserved: 2 });
    await w.release("compute1", "arq-1");
    const [after, afterModel] = await Promise.all([fromDomain(w, ["compute1"]), fromReadModel(es)]);
    expect(after).toEqual(afterModel);
    expect(after.map((r) => r.name)).toEqual(["compute1_0000:af:00.0"]);
  });
});
