/**
 * Placements racing: many `placeAcceleratorRequests` at once, through the application and the
 * read side the API uses (the projector keeping the read models, the engine choosing from them).
 * - 1,000 placements from 20 projects against GPU quotas that allow 300 in all (ten projects may
 *   hold 10, ten may hold 20), on 60 hosts of 8 GPUs: exactly 300 BOUND, each project at its limit
 *   and its usage the ARQs it holds (the claims of ARQs a lost race deleted are released with
 *   them), no device held twice, every other placement refused with QUOTA_EXCEEDED, and no ARQ
 *   left half made in the log or the read models (a lost race's ARQs are deleted again).
 * - 400 placements without quotas for 480 GPUs: each BOUND on its own device or refused after
 *   losing its race on every try (CONFLICT), nothing half made.
 * Each prints its outcomes and how many binds lost a race to another and were tried again.
 * On the memory store and on the embedded LMDB log.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projections } from "../../projections/index.js";
import { listArqs } from "../../projections/arqs/queries.js";
import { placeArqs } from "../../src/api/scheduling.js";
import { Application } from "../../src/app/application.js";
import { evolveArq, initialArqState, liveArq } from "../../src/domain/arqs/decider.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import { DomainError, streamPrefix } from "../../src/domain/shared/types.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { ADMIN, ctx, pci } from "../app/support.js";

const PROJECTS = 20;
const HOSTS = 60;
const GPUS_PER_HOST = 8;
const limitOf = (p: number) => (p % 2 === 0 ? 10 : 20);
const project = (p: number) => `project-${p}`;
const instance = (i: number) => `4a0c3a36-7c8e-4b9a-9c53-${String(i).padStart(12, "0")}`;

/** One GPU with one handle (resource class PGPU). */
const gpu = (host: string, i: number): DriverDevice => {
  const bus = (0x10 + i).toString(16);
  return {
    type: "GPU",
    vendor: "10de",
    model: "race",
    controlPath: { type: "PCI", info: pci(bus) },
    deployables: [{ name: `${host}_gpu${i}`, numAccelerators: 1, driverName: "fake", attributes: [{ key: "rc", value: "PGPU" }], attachHandles: [{ type: "PCI", info: pci(bus) }] }],
  };
};

interface Fleet {
  app: Application;
  readStore: MemoryReadStore;
  projector: Projector;
  /** Binds tried, and of them those that lost the race for their provider (then tried on the next choice). */
  binds: { tried: number; lost: number };
  place(i: number, projectId: string): Promise<unknown>;
}

async function fleet(store: EventStore): Promise<Fleet> {
  const app = new Application({ store, quota: { defaults: {} } });
  const readStore = new MemoryReadStore();
  const projector = new Projector({ events: store, store: readStore, projections });
  await projector.start();
  await app.createDeviceProfile(ADMIN, { name: "gpu", groups: [{ "resources:PGPU": "1" }] });
  for (let h = 0; h < HOSTS; h++) {
    const host = `r${String(Math.floor(h / 10)).padStart(2, "0")}-c${String(h % 10).padStart(2, "0")}`;
    await app.reportHostInventory({ ...ADMIN, at: new Date().toISOString() }, host, Array.from({ length: GPUS_PER_HOST }, (_, i) => gpu(host, i)));
  }
  await projector.caughtUp();

  // The application as placeArqs sees it, counting each bind it tries and each it loses to another.
  const binds = { tried: 0, lost: 0 };
  const counting: Application = Object.create(app);
  counting.createAndBindArqs = async (...args) => {
    binds.tried++;
    try {
      return await app.createAndBindArqs(...args);
    } catch (err) {
      if (err instanceof DomainError && err.code === "CONFLICT" && String(err.field ?? "").endsWith("deviceRpUuid")) binds.lost++;
      throw err;
    }
  };
  const place = (i: number, projectId: string) =>
    placeArqs(counting, readStore, ctx({ projectId, principal: `user-${i}` }), { deviceProfileName: "gpu" }, { instanceUuid: instance(i), limits: {}, allocate: true, catchUp: () => projector.caughtUp() });
  return { app, readStore, projector, binds, place };
}

/** The ARQs in the log, folded: the live ones, and how many were made and deleted again (a bind that lost its race). */
async function arqsInLog(store: EventStore) {
  const byArq = new Map<string, ReturnType<typeof initialArqState>>();
  for (const e of await store.readAll()) {
    if (!e.stream.startsWith(streamPrefix.arq)) continue;
    byArq.set(e.stream, evolveArq(byArq.get(e.stream) ?? initialArqState(), e as never));
  }
  const states = [...byArq.values()];
  return { live: states.flatMap((s) => liveArq(s) ?? []), deleted: states.filter((s) => s.status === "deleted").length };
}

/** Every ARQ the read models show is BOUND, each on its own provider (one handle each): none held twice. */
async function boundOnce(f: Fleet, expected: number) {
  await f.projector.caughtUp();
  const all = await listArqs(f.readStore, {}, 10_000);
  expect(all.items).toHaveLength(expected);
  expect(new Set(all.items.map((a) => a.state))).toEqual(new Set(expected ? ["BOUND"] : []));
  expect(new Set(all.items.map((a) => a.deviceRpUuid)).size).toBe(expected);
  return all.items;
}

/** A placement that lost its race on every try: CONFLICT on the provider, its ARQs deleted again. */
const lostRace = (r: unknown) => r instanceof DomainError && r.code === "CONFLICT" && String(r.field ?? "").endsWith("deviceRpUuid");

async function quotaRace(store: EventStore): Promise<void> {
  const f = await fleet(store);
  try {
    for (let p = 0; p < PROJECTS; p++) await f.app.setProjectQuota(ADMIN, project(p), [{ resourceClass: "PGPU", limit: limitOf(p) }]);
    const outcomes = await Promise.allSettled(Array.from({ length: 1_000 }, (_, i) => f.place(i, project(i % PROJECTS))));
    const refusals = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
    const quota = refusals.filter((r) => r instanceof DomainError && r.code === "QUOTA_EXCEEDED");
    const lost = refusals.filter(lostRace);
    const placed = outcomes.length - refusals.length;
    console.log(`placement race with quotas (${store.constructor.name}): ${placed} BOUND, ${quota.length} QUOTA_EXCEEDED, ${lost.length} CONFLICT; ${f.binds.tried} binds tried, ${f.binds.lost} lost a race and were tried again`);

    // Exactly what the quotas allow: a lost race is tried again on the next choice, never given up
    // while devices are free, and the claims of its deleted ARQs are released with them.
    expect(lost).toEqual([]);
    expect(quota.length).toBe(refusals.length);
    for (const r of quota) expect((r as DomainError).details).toMatchObject({ resourceClass: "PGPU" });
    expect(placed).toBe(300);
    const bound = await boundOnce(f, placed);
    const inLog = await arqsInLog(store);
    expect(inLog.live).toHaveLength(placed);
    expect(new Set(inLog.live.map((a) => a.state))).toEqual(new Set(["BOUND"]));
    expect(inLog.deleted).toBe(f.binds.lost);
    for (let p = 0; p < PROJECTS; p++) {
      const held = bound.filter((a) => a.projectId === project(p)).length;
      expect(held).toBe(limitOf(p));
      // No claim left behind by the ARQs a lost race deleted: the usage is what the project holds.
      const q = await f.app.projectQuota(project(p));
      expect(q.classes.find((c) => c.resourceClass === "PGPU")!.usage).toBe(held);
    }
  } finally {
    await f.projector.stop();
  }
}

async function openRace(store: EventStore): Promise<void> {
  const f = await fleet(store);
  try {
    const outcomes = await Promise.allSettled(Array.from({ length: 400 }, (_, i) => f.place(i, project(i % PROJECTS))));
    const refusals = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
    const placed = outcomes.length - refusals.length;
    console.log(`placement race without quotas (${store.constructor.name}): ${placed} BOUND, ${refusals.length} CONFLICT; ${f.binds.tried} binds tried, ${f.binds.lost} lost a race and were tried again`);
    expect(refusals.filter(lostRace)).toHaveLength(refusals.length);
    await boundOnce(f, placed);
    const inLog = await arqsInLog(store);
    expect(inLog.live).toHaveLength(placed);
    expect(inLog.deleted).toBe(f.binds.lost);
  } finally {
    await f.projector.stop();
  }
}

async function onLmdb(run: (store: EventStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-placement-race-"));
  const store = await LmdbEventStore.open(dir);
  try {
    await run(store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe("placements racing for devices and project quotas", () => {
  it("1,000 placements from 20 projects against quotas allowing 300, on the memory store: exactly 300 BOUND, each project at its limit, no device held twice, nothing half made", async () => {
    await quotaRace(new MemoryEventStore());
  }, 300_000);

  it("1,000 placements from 20 projects against quotas allowing 300, on the LMDB log: exactly 300 BOUND, each project at its limit, no device held twice, nothing half made", async () => {
    await onLmdb(quotaRace);
  }, 300_000);

  it("400 placements for 480 GPUs without quotas, on the memory store: each BOUND on its own device or refused after lost races, nothing half made", async () => {
    await openRace(new MemoryEventStore());
  }, 300_000);

  it("400 placements for 480 GPUs without quotas, on the LMDB log: each BOUND on its own device or refused after lost races, nothing half made", async () => {
    await onLmdb(openRace);
  }, 300_000);
});
