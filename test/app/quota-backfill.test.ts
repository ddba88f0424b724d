/**
 * A project's ARQs made before its quota stream (before quotas counted them) are counted once, on
 * the stream's first use, from what the read side shows; later creations count against the limit
 * with them.
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { ADMIN, ctx } from "./support.js";

describe("quota backfill", () => {
  it("claims the ARQs made before the quota stream as its first event, once, and counts them against the limit", async () => {
    const store = new MemoryEventStore();
    const before = new Application({ store });
    await before.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
    const old = [...(await before.createArqs(ctx(), { deviceProfileName: "dp1" })), ...(await before.createArqs(ctx(), { deviceProfileName: "dp1" }))];
    expect(await store.readStream(stream.quota("p1"))).toEqual([]);

    let asked = 0;
    // What the arqs read model would answer for p1 (the service wires projections/arqs liveArqsOf).
    const existing = async (projectId: string) => {
      asked++;
      return projectId === "p1" ? old.map((a) => ({ arqUuid: a.uuid, group: a.group })) : [];
    };
    const app = new Application({ store, quota: { defaults: { ARQS: 3 }, existing } });
    // Read before the stream's first use: shown as the backfill will count them, nothing written.
    expect((await app.projectQuota("p1")).classes).toContainEqual({ resourceClass: "ARQS", limit: 3, own: false, usage: 2 });
    expect(await store.readStream(stream.quota("p1"))).toEqual([]);
    await app.createArqs(ctx(), { deviceProfileName: "dp1" });
    await expect(app.createArqs(ctx(), { deviceProfileName: "dp1" })).rejects.toMatchObject({ code: "QUOTA_EXCEEDED" });

    const events = await store.readStream(stream.quota("p1"));
    expect(events.map((e) => e.type)).toEqual(["QuotaBackfilled", "QuotaClaimed"]);
    expect((events[0]!.data as { claims: Array<{ arqUuid: string }> }).claims.map((c) => c.arqUuid)).toEqual(old.map((a) => a.uuid));
    expect(events[0]!.revision).toBe(0);
    expect(asked).toBe(2);
    const quota = await app.projectQuota("p1");
    expect(quota.claims).toBe(3);
    expect(quota.classes).toContainEqual({ resourceClass: "FPGA", limit: null, own: false, usage: 3 });

    // Deleting an ARQ made before the stream releases its backfilled claim: there is room again.
    await app.deleteArqs(ctx(), { arqUuids: [old[0]!.uuid] });
    await app.createArqs(ctx(), { deviceProfileName: "dp1" });
    expect(asked).toBe(2);
  });

  it("counts the earlier ARQs before an administrator's first limit starts the stream", async () => {
    const store = new MemoryEventStore();
    const before = new Application({ store });
    await before.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
    const old = await before.createArqs(ctx(), { deviceProfileName: "dp1" });
    const app = new Application({ store, quota: { defaults: {}, existing: async () => old.map((a) => ({ arqUuid: a.uuid, group: a.group })) } });
    const q = await app.setProjectQuota(ADMIN, "p1", [{ resourceClass: "FPGA", limit: 1 }]);
    expect(q.classes).toContainEqual({ resourceClass: "FPGA", limit: 1, own: true, usage: 1 });
    expect((await store.readStream(stream.quota("p1"))).map((e) => e.type)).toEqual(["QuotaBackfilled", "QuotaLimitsSet"]);
    await expect(app.createArqs(ctx(), { deviceProfileName: "dp1" })).rejects.toMatchObject({ code: "QUOTA_EXCEEDED" });
  });

  it("a delete that a project's first backfill overtakes releases the claim the backfill gave its ARQ", async () => {
    // The compute service's ARQs claim nothing, so their delete takes no quota lock; a member's first
    // creation may backfill the project between the delete's plan and its append.
    let overtake: (() => Promise<void>) | undefined;
    class OvertakenStore extends MemoryEventStore {
      override async appendSequence(steps: Parameters<MemoryEventStore["appendSequence"]>[0]) {
        const go = steps.some((st) => st.events.some((e) => e.type === "ArqDeleted")) ? overtake : undefined;
        overtake = undefined;
        await go?.();
        return super.appendSequence(steps);
      }
    }
    const store = new OvertakenStore();
    const before = new Application({ store });
    await before.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
    const [arq] = await before.createArqs(ctx(), { deviceProfileName: "dp1" });
    const app = new Application({ store, quota: { defaults: { ARQS: 5 }, existing: async () => [{ arqUuid: arq!.uuid, group: arq!.group }] } });
    overtake = async () => {
      await app.setProjectQuota(ADMIN, "p1", [{ resourceClass: "FPGA", limit: 5 }]);
    };
    await app.deleteArqs(ctx(), { arqUuids: [arq!.uuid] });
    expect(overtake).toBeUndefined();
    const events = await store.readStream(stream.quota("p1"));
    expect(events.map((e) => e.type)).toEqual(["QuotaBackfilled", "QuotaLimitsSet", "QuotaReleased"]);
    const quota = await app.projectQuota("p1");
    expect(quota.claims).toBe(0);
    expect(quota.classes).toContainEqual({ resourceClass: "FPGA", limit: 5, own: true, usage: 0 });
  });
});
