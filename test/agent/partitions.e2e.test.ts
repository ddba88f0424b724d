/**
 * Partitions made at bind, end to end: the service in this process and the real agent spawned as
 * a user runs it, with the fake-mig driver (an H100-like GPU in MIG mode). A bind to a profile's
 * provider asks the agent to make the partition and completes with its MIG handle; a bind past
 * the slots is refused with the reason; an unbind has the agent destroy the partition, so its
 * slots take a larger one; a partition the agent cannot make fails its bind with the tool's words.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { collect, startTestService, type TestService } from "../api/harness.js";
import { BIND, BOUND, CREATE_ARQS, CREATE_PROFILE, UNBIND, type BoundEvent } from "../api/operations.js";
import { fpgaE2e, history } from "./support/fpga-e2e.js";

const kit = fpgaE2e(["mig-a", "mig-fail"]);
const GPU = "0000:40:00.0";
const PARTITIONING = `query($host: String!) { devices(filter: { hostname: $host }) { nodes { partitioning {
  counters { name total used } slots { total used } profiles { name made free canHoldNow } partitions { uuid profile placement { start size } status arqUuid } } } } }`;
const PROVIDERS = `query($host: String!) { resourceProviders(hostname: $host) { name resourceClass total reserved used } }`;

let t: TestService;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-e2e-mig-"));
  await kit.build();
  t = await startTestService({ overrides: { tokens: kit.tokens() }, dataDir });
  for (const size of ["3g.40gb", "7g.80gb"]) {
    const rc = `CUSTOM_MIG_${size.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
    await t.ok("admin", CREATE_PROFILE, { input: { name: `mig-${size.replace(".", "-")}`, groups: [{ [`resources:${rc}`]: "1" }] } });
  }
});
afterAll(async () => {
  await kit.stop();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function bindOn(host: string, size: string) {
  const [arq] = (await t.ok("service", CREATE_ARQS, { name: `mig-${size.replace(".", "-")}` })).createAcceleratorRequests;
  const events = collect<BoundEvent>(t.ws("service"), BOUND, { arqs: [arq.uuid] });
  const binding = { arqUuid: arq.uuid, hostname: host, deviceRpUuid: rpUuidFor(`${host}_${GPU}_${size}`), instanceUuid: randomUUID() };
  await t.ok("service", BIND, { bindings: [binding] });
  return { arq: arq.uuid as string, bound: async () => (await events.next(1, 30_000))[0]!.acceleratorRequestBound };
}

async function capacity(host: string, size: string): Promise<number> {
  const rps = (await t.ok("admin", PROVIDERS, { host })).resourceProviders as Array<{ name: string; total: number; reserved: number }>;
  const rp = rps.find((p) => p.name === `${host}_${GPU}_${size}`)!;
  return rp.total - rp.reserved;
}

describe("partitions made at bind, with the agent", () => {
  it("makes a partition per bind, refuses one past the slots, and destroys a released one so a larger fits", async () => {
    const agent = await kit.agentFor(t, "mig-a", ["--drivers", "fake-mig"]);
    expect(await capacity("mig-a", "3g.40gb")).toBe(2);
    const first = await bindOn("mig-a", "3g.40gb");
    const bound = await first.bound();
    expect(bound).toMatchObject({ status: "COMPLETED", arq: { state: "BOUND", attachHandleType: "MIG" } });
    expect(bound.arq.attachHandleInfo!).toMatchObject({ gpu_bdf: GPU });
    expect(String(bound.arq.attachHandleInfo!.uuid)).toMatch(/^MIG-/);
    const made = await agent.waitFor((l) => l.msg === "partition made", "that it made the partition");
    expect(made.partition).toBe(bound.arq.attachHandleInfo!.uuid);
    // The whole GPU can no longer be had; one more 3g.40gb can.
    expect(await capacity("mig-a", "7g.80gb")).toBe(0);
    const second = await bindOn("mig-a", "3g.40gb");
    expect(await second.bound()).toMatchObject({ status: "COMPLETED" });
    // The device as an operator reads it: slices used and free, each profile's room, who holds what.
    const [gpu] = (await t.ok("admin", PARTITIONING, { host: "mig-a" })).devices.nodes;
    expect(gpu.partitioning).toMatchObject({ counters: [{ name: "compute", total: 7, used: 6 }], slots: { total: 8, used: 8 } });
    expect(gpu.partitioning.profiles.find((p: { name: string }) => p.name === "3g.40gb")).toEqual({ name: "3g.40gb", made: 2, free: 0, canHoldNow: 2 });
    expect(gpu.partitioning.partitions.map((p: { arqUuid: string; status: string }) => [p.arqUuid, p.status]).sort()).toEqual([[first.arq, "READY"], [second.arq, "READY"]].sort());
    const third = await bindOn("mig-a", "3g.40gb");
    const refused = await third.bound();
    expect(refused.status).toBe("FAILED");
    expect(refused.reason).toMatch(/counter "compute" has 1 of 7 left|none of its placements is free/);
    // Both released: the agent destroys both partitions, and the whole GPU fits again.
    await t.ok("service", UNBIND, { uuids: [first.arq, second.arq] });
    await agent.waitFor((l) => l.msg === "partition destroyed" && agent.lines.filter((x) => x.msg === "partition destroyed").length === 2, "that it destroyed both");
    const whole = await bindOn("mig-a", "7g.80gb");
    expect(await whole.bound()).toMatchObject({ status: "COMPLETED", arq: { attachHandleType: "MIG" } });
    const types = (await history(t, "mig-a")).map((e) => e.type).filter((x) => x.startsWith("Partition") && x !== "PartitionInventoryChanged");
    expect(types).toEqual([
      "PartitionCreationRequested",
      "PartitionCreated",
      "PartitionCreationRequested",
      "PartitionCreated",
      "PartitionDestructionRequested",
      "PartitionDestructionRequested",
      "PartitionDestroyed",
      "PartitionDestroyed",
      "PartitionCreationRequested",
      "PartitionCreated",
    ]);
  });

  it("fails the bind with the tool's words when the agent cannot make the partition, and frees its slots", async () => {
    await kit.agentFor(t, "mig-fail", ["--drivers", "fake-mig", "--fake-mig-create-fail", "Insufficient Resources"]);
    const b = await bindOn("mig-fail", "7g.80gb");
    const failed = await b.bound();
    expect(failed.status).toBe("FAILED");
    expect(failed.reason).toContain("Insufficient Resources");
    expect(await capacity("mig-fail", "7g.80gb")).toBe(1);
  });
});
