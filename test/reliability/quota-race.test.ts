/**
 * 1,000 ARQ creations at once from 20 projects, against GPU limits that allow 300 in all (ten
 * projects may hold 10, ten may hold 20): exactly 300 succeed, no project passes its limit, every
 * other creation is refused with QUOTA_EXCEEDED, and each project's usage is the ARQs it holds;
 * deleting an ARQ frees its place.
 * On the memory store and on the embedded LMDB log.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { evolveArq, initialArqState, liveArq } from "../../src/domain/arqs/decider.js";
import { DomainError, streamPrefix } from "../../src/domain/shared/types.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { ADMIN, ctx } from "../app/support.js";

const PROJECTS = 20;
const CREATIONS = 1_000;
const limitOf = (p: number) => (p % 2 === 0 ? 10 : 20);
const project = (p: number) => `project-${p}`;

async function race(store: EventStore): Promise<void> {
  const app = new Application({ store, quota: { defaults: {} } });
  await app.createDeviceProfile(ADMIN, { name: "gpu", groups: [{ "resources:GPU": "1" }] });
  for (let p = 0; p < PROJECTS; p++) await app.setProjectQuota(ADMIN, project(p), [{ resourceClass: "GPU", limit: limitOf(p) }]);
  const total = Array.from({ length: PROJECTS }, (_, p) => limitOf(p)).reduce((a, b) => a + b, 0);
  expect(total).toBe(300);

  const outcomes = await Promise.allSettled(
    Array.from({ length: CREATIONS }, (_, i) => app.createArqs(ctx({ projectId: project(i % PROJECTS), principal: `user-${i}` }), { deviceProfileName: "gpu" })),
  );
  const refusals = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
  const codes = refusals.map((r) => (r instanceof DomainError ? r.code : String(r)));
  expect(new Set(codes)).toEqual(new Set(["QUOTA_EXCEEDED"]));
  expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(300);
  for (const r of refusals) expect((r as DomainError).details).toMatchObject({ resourceClass: "GPU" });

  // The ARQs each project holds, from the log itself.
  const held = new Map<string, number>();
  const byArq = new Map<string, ReturnType<typeof initialArqState>>();
  for (const e of await store.readAll()) {
    if (!e.stream.startsWith(streamPrefix.arq)) continue;
    byArq.set(e.stream, evolveArq(byArq.get(e.stream) ?? initialArqState(), e as never));
  }
  for (const state of byArq.values()) {
    const arq = liveArq(state);
    if (arq?.projectId) held.set(arq.projectId, (held.get(arq.projectId) ?? 0) + 1);
  }
  for (let p = 0; p < PROJECTS; p++) {
    const q = await app.projectQuota(project(p));
    const gpu = q.classes.find((c) => c.resourceClass === "GPU")!;
    expect(gpu).toEqual({ resourceClass: "GPU", limit: limitOf(p), own: true, usage: limitOf(p) });
    expect(held.get(project(p))).toBe(limitOf(p));
    expect(q.claims).toBe(limitOf(p));
  }

  // Deleting an ARQ releases its claim: the place it held is free for one creation, not two.
  const member = ctx({ projectId: project(0) });
  const won = outcomes.flatMap((o, i) => (o.status === "fulfilled" && i % PROJECTS === 0 ? o.value : []));
  await app.deleteArqs(member, { arqUuids: [won[0]!.uuid] });
  expect((await app.projectQuota(project(0))).classes.find((c) => c.resourceClass === "GPU")!.usage).toBe(limitOf(0) - 1);
  await app.createArqs(member, { deviceProfileName: "gpu" });
  await expect(app.createArqs(member, { deviceProfileName: "gpu" })).rejects.toMatchObject({ code: "QUOTA_EXCEEDED" });
}

describe("creations racing for project quotas", () => {
  it(`${CREATIONS} creations from ${PROJECTS} projects on the memory store: exactly 300 take, the rest QUOTA_EXCEEDED`, async () => {
    await race(new MemoryEventStore());
  }, 120_000);

  it(`${CREATIONS} creations from ${PROJECTS} projects on the LMDB log: exactly 300 take, the rest QUOTA_EXCEEDED`, async () => {
    const dir = await mkdtemp(join(tmpdir(), "cyborg-es-quota-race-"));
    const store = await LmdbEventStore.open(dir);
    try {
      await race(store);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
