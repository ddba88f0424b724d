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

type Row = { uuid: string; name: string; parent: string; rc: string; total: number; reserved: number; traits: string[] };

/** The domain's view: fold each host stream, ask for its providers. */
async function fromDomain(w: HostWriter, hosts: readonly string[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const h of hosts) {
    for (const p of desiredProviders((await w.load(h)).state)) {
      rows.push({ uuid: p.uuid, name: p.name, parent: p.parentName, rc: p.resourceClass, total: p.total, reserved: p.reserved, traits: p.traits });
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
