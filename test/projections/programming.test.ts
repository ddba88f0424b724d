/** The deployables model's view of programming: requests in flight, how the last one ended, and what runs a bitstream. */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { projections } from "../../projections/index.js";
import * as deployables from "../../projections/deployables/queries.js";

const dir = mkdtempSync(join(tmpdir(), "cyborg-es-proj-prog-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ctx = (): CommandContext => ({ principal: "admin", correlationId: randomUUID(), causationId: randomUUID(), at: new Date().toISOString(), isAdmin: true });
const device = (host: string) => ({
  type: "FPGA" as const,
  vendor: "0xABCD",
  model: "fake",
  controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
  deployables: [
    {
      name: `${host}_FakeDevice`,
      numAccelerators: 2,
      driverName: "fake",
      attributes: [{ key: "rc", value: "FPGA" }],
      attachHandles: [1, 2].map((f) => ({ type: "TEST_PCI" as const, info: { domain: "0000", bus: "0c", device: "00", function: String(f) } })),
    },
  ],
});

async function rebuilt(store: MemoryEventStore) {
  const read = new MemoryReadStore();
  await new Projector({ events: store, store: read, projections }).rebuild();
  return read;
}

describe("deployables model: programming", () => {
  it("shows the request in flight, then how it ended, and finds the regions running a bitstream", async () => {
    const store = new MemoryEventStore();
    const app = new Application({ store, bitstreams: { contentDir: dir } });
    for (const h of ["h1", "h2"]) await app.reportHostInventory(ctx(), h, [device(h)]);
    const b = await app.uploadBitstream(ctx(), { name: "a.gbs", functionId: "fa" }, Readable.from([Buffer.from("bits")]));
    const dep = async (h: string) => (await deployables.listDeployables(await rebuilt(store), { rpUuid: rpUuidFor(`${h}_FakeDevice`) }, 1)).items[0]!;
    const d1 = await dep("h1");
    const d2 = await dep("h2");
    await app.programDeployable(ctx(), { hostname: "h1", deployableUuid: d1.uuid, bitstreamId: b.id });
    await app.programDeployable(ctx(), { hostname: "h2", deployableUuid: d2.uuid, bitstreamId: b.id });

    let read = await rebuilt(store);
    const [p1] = await deployables.programmingOf(read, [d1.uuid]);
    expect(p1).toMatchObject({ bitstreamId: b.id, bitstreamName: "a.gbs", checksum: b.checksum, functionId: "fa", requestedBy: { kind: "operator", principal: "admin" } });
    expect(await deployables.deployablesUsingBitstream(read, b.id)).toMatchObject({ running: [], programming: [{ uuid: d1.uuid }, { uuid: d2.uuid }] });

    const [req1] = await app.programmingInFlight("h1");
    const [req2] = await app.programmingInFlight("h2");
    await app.reportProgrammingResult(ctx(), { hostname: "h1", deployableUuid: d1.uuid, requestId: req1!.requestId, ok: true, command: ["fake-program"], durationMs: 5 });
    await app.reportProgrammingResult(ctx(), { hostname: "h2", deployableUuid: d2.uuid, requestId: req2!.requestId, ok: false, command: ["fake-program"], durationMs: 7, reason: "device busy" });

    read = await rebuilt(store);
    expect(await deployables.programmingOf(read, [d1.uuid, d2.uuid])).toEqual([null, null]);
    expect(await deployables.lastProgrammingOf(read, [d1.uuid, d2.uuid])).toMatchObject([
      { outcome: "PROGRAMMED", bitstreamId: b.id, command: ["fake-program"], durationMs: 5, reason: null },
      { outcome: "FAILED", bitstreamId: b.id, reason: "device busy", durationMs: 7 },
    ]);
    expect(await deployables.deployablesUsingBitstream(read, b.id)).toMatchObject({ running: [{ uuid: d1.uuid, bitstreamId: b.id }], programming: [] });
    const page = await deployables.listDeployables(read, { bitstreamId: b.id }, 10);
    expect(page.items.map((d) => d.uuid)).toEqual([d1.uuid]);
    expect(page.items[0]!.traits).toContain("CUSTOM_FPGA_FAKE_FUNCTION_FA");
  });
});
