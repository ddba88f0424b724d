/**
 * Audit of FPGA programming: a bind that waits for its region's programming, told in the
 * region's, the bitstream's and the ARQ's history, in the bind's trace, and seen as it was
 * (asOf) in agreement with the deployables read model at each point.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastProgrammingOf, programmingOf } from "../../projections/deployables/queries.js";
import { projections } from "../../projections/index.js";
import { Application } from "../../src/app/application.js";
import { history, trace } from "../../src/audit/history.js";
import { PastQueries } from "../../src/audit/past-queries.js";
import * as past from "../../src/audit/past-views.js";
import { replayInto } from "../../src/audit/replay.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { createLogger } from "../../src/infra/logger.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { ctx as appCtx, fpgaRegion, until } from "../app/support.js";

const HOST = "compute1";
const ctx = (over: Partial<CommandContext> = {}): CommandContext =>
  appCtx({ roles: ["service"], correlationId: randomUUID(), at: new Date().toISOString(), isAdmin: true, ...over });

describe("audit of a bind that needs its region programmed", () => {
  const store = new MemoryEventStore();
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-audit-prog-"));
  const app = new Application({ store, bitstreams: { contentDir: dir } });
  const binder = new Binder({ store, app, log: createLogger("silent"), bindTimeoutMs: 60_000 });
  const bindRequest = `bind-${randomUUID()}`;
  let bitstreamId = "";
  let arq = "";
  let region = "";
  let device = "";
  /** Positions: the request in flight, and the region programmed. */
  let requested = 0n;
  let programmed = 0n;

  beforeAll(async () => {
    await app.reportHostInventory(ctx({ principal: "agent:compute1", roles: ["agent"] }), HOST, [fpgaRegion(HOST, 2)]);
    const b = await app.uploadBitstream(ctx({ principal: "admin", roles: ["admin"] }), { name: "a.gbs", functionId: "fa", regionType: "r1", vendor: "fake" }, Readable.from([Buffer.from("bits")]));
    bitstreamId = b.id;
    await app.createDeviceProfile(ctx({ principal: "admin", roles: ["admin"] }), { name: "by-id", groups: [{ "resources:FPGA": "1", "accel:bitstream_id": b.id }] });
    await binder.start();
    arq = (await app.createArqs(ctx(), { deviceProfileName: "by-id" }))[0]!.uuid;
    const rp = rpUuidFor(`${HOST}_FakeDevice`);
    await app.startBinds(ctx({ correlationId: bindRequest, causationId: bindRequest }), [{ arqUuid: arq, hostname: HOST, deviceRpUuid: rp, instanceUuid: randomUUID() }], { allocate: true });
    const [r] = await app.programmingInFlight(HOST);
    region = r!.deployableUuid;
    requested = (await store.headPosition())!;
    await app.reportProgrammingResult(ctx({ principal: "agent:compute1", roles: ["agent"] }), {
      hostname: HOST,
      deployableUuid: region,
      requestId: r!.requestId,
      ok: true,
      command: ["fake-program", "x"],
      durationMs: 10,
    });
    programmed = (await store.readAll()).find((e) => e.type === "RegionProgrammed")!.position;
    await until(async () => (await app.getArq(arq))!.state === "BOUND", 5000);
    device = ((await store.readAll()).find((e) => e.type === "DeviceDiscovered")!.data as { deviceUuid: string }).deviceUuid;
  });
  afterAll(async () => {
    await binder.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const modelsAt = async (upTo: bigint) => {
    const readStore = new MemoryReadStore();
    await replayInto(store, readStore, projections, upTo);
    return readStore;
  };

  it("the region's, the bitstream's and the ARQ's history tell the programming, each line with who did it", async () => {
    const readStore = await modelsAt((await store.headPosition())!);
    const types = async (uuid: string) => (await history(store, readStore, uuid, 100)).items.map((e) => e.type);
    expect(await types(region)).toEqual(expect.arrayContaining(["DeployableAdded", "RegionProgrammingRequested", "RegionProgrammed", "AttachHandleAllocated"]));
    expect(await types(bitstreamId)).toEqual(["BitstreamAdded", "RegionProgrammingRequested", "RegionProgrammed"]);
    const arqHistory = (await history(store, readStore, arq, 100)).items;
    expect(arqHistory.map((e) => e.type)).toEqual(expect.arrayContaining(["RegionProgrammingRequested", "RegionProgrammed", "ArqBound"]));
    const done = arqHistory.find((e) => e.type === "RegionProgrammed")!;
    expect(done.summary).toMatch(new RegExp(`^region ${region} on ${HOST} programmed with bitstream a.gbs \\(${bitstreamId}\\) in 10 ms .* by agent:compute1 \\(agent\\)$`));
    // The binder finished the bind: its step carries the bind's request (trace) and names its cause.
    const boundEntry = arqHistory.find((e) => e.type === "ArqBound")!;
    expect(boundEntry).toMatchObject({ principal: "system:binder", correlationId: bindRequest });
    const traced = (await trace(store, readStore, bindRequest, 100)).items;
    expect(traced.map((e) => e.type)).toEqual(expect.arrayContaining(["ArqBindStarted", "RegionProgrammingRequested", "ArqBound"]));
  });

  it("asOf shows the region's programming as the deployables read model showed it at that point", async () => {
    const pastQueries = (readStore: MemoryReadStore) => new PastQueries(store, readStore);
    for (const point of [requested, programmed]) {
      const readStore = await modelsAt(point);
      const pastDevice = (await pastQueries(await modelsAt((await store.headPosition())!)).device(device, point.toString()))!;
      const [deployable] = past.deployablesOf(pastDevice);
      expect(past.programmingOf(deployable!)).toEqual((await programmingOf(readStore, [region]))[0] ?? null);
      expect(past.lastProgrammingOf(deployable!)).toEqual((await lastProgrammingOf(readStore, [region]))[0] ?? null);
    }
    const atRequest = past.deployablesOf((await pastQueries(await modelsAt(programmed)).device(device, requested.toString()))!)[0]!;
    expect(past.programmingOf(atRequest)).toMatchObject({ bitstreamId, requestedBy: { kind: "bind", arqUuid: arq } });
    const atProgrammed = past.deployablesOf((await pastQueries(await modelsAt(programmed)).device(device, programmed.toString()))!)[0]!;
    expect(past.lastProgrammingOf(atProgrammed)).toMatchObject({ bitstreamId, outcome: "PROGRAMMED", durationMs: 10, command: ["fake-program", "x"] });
  });
});
