/**
 * The past audit index of Redis mode (src/audit/past-index.ts): the live index cut at a position
 * answers history and trace exactly as an index replayed up to that position does, at every
 * position of a scripted scenario's log, page by page; and it fails closed while the live index
 * has not reached the position.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projection as audit } from "../../projections/audit/projection.js";
import { projections } from "../../projections/index.js";
import { history, trace } from "../../src/audit/history.js";
import { PastAuditIndex } from "../../src/audit/past-index.js";
import { pastLog, replayInto } from "../../src/audit/replay.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { ReadStoreUnavailableError, type ReadStore } from "../../src/infra/readstore/port.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startTestService, type TestService } from "../api/harness.js";
import { startRedis, type TestRedis } from "../support/redis.js";
import { runScenario } from "./scenario.js";

describe("the past audit index: the live one cut at a position", () => {
  let t: TestService;
  let redis: TestRedis;
  let log: EventStore;
  let head: bigint;
  /** The index's keys at the head: every object and request of the log. */
  let objects: string[];
  let requests: string[];
  const opened: ReadStore[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    t = await startTestService();
    await runScenario(t, async () => undefined);
    log = t.service.store;
    head = (await log.headPosition())!;
    const whole = new MemoryReadStore();
    await replayInto(log, whole, [audit], head);
    const keys = Object.keys((await whole.dump("audit")).keys);
    const ids = (part: string) => keys.filter((k) => k.startsWith(`{audit}:${part}:`)).map((k) => k.slice(`{audit}:${part}:`.length));
    objects = [...new Set([...ids("object"), ...ids("parts")])];
    requests = ids("request");
  }, 120_000);

  afterAll(async () => {
    for (const s of opened) await s.close();
    await t?.close();
    await redis?.stop();
  });

  /** Every answer of history and trace at `p`, whole and a page of 2 at a time. */
  async function answers(events: EventStore, store: ReadStore) {
    const out: unknown[] = [];
    const pages = async (read: (first: number, after?: bigint) => ReturnType<typeof history>) => {
      out.push(await read(1000));
      let after: bigint | undefined;
      for (;;) {
        const page = await read(2, after);
        out.push(page);
        if (!page.hasNextPage) break;
        after = BigInt(page.cursors.at(-1)!);
      }
    };
    for (const id of objects) await pages((first, after) => history(events, store, id, first, after));
    for (const id of requests) await pages((first, after) => trace(events, store, id, first, after));
    return out;
  }

  for (const live of ["memory", "redis"] as const) {
    it(`answers history and trace as a replay up to each position does (live index in ${live})`, async () => {
      const index: ReadStore = live === "memory" ? new MemoryReadStore() : new RedisReadStore(`${redis.url}/6`);
      opened.push(index);
      await replayInto(log, index, [audit], head);
      expect(objects.length).toBeGreaterThan(10);
      expect(requests.length).toBeGreaterThan(5);
      const positions = (await log.readAll({})).map((e) => e.position);
      // Every position in a small log; a spread of them in a larger one.
      const step = Math.max(1, Math.floor(positions.length / 40));
      const points = [0n, ...positions.filter((_, i) => i % step === 0), head];
      for (const p of points) {
        const events = pastLog(log, p);
        const replayed = new MemoryReadStore();
        await replayInto(log, replayed, projections, p);
        const others = new MemoryReadStore();
        await replayInto(log, others, projections.filter((x) => x.name !== "audit"), p);
        const past = new PastAuditIndex(others, index.guarded(), p);
        expect(await answers(events, past), `at position ${p}`).toEqual(await answers(events, replayed));
        const keys = Object.keys((await replayed.dump("audit")).keys);
        expect(await past.getMembers(keys)).toEqual(await replayed.getMembers(keys));
        expect(await past.count(keys)).toEqual(await replayed.count(keys));
        // The other models are the replayed ones.
        expect(await past.dump("arqs")).toEqual(await replayed.dump("arqs"));
      }
    }, 120_000);
  }

  it("fails closed while the live index is behind the position, and serves once it caught up", async () => {
    const live = new MemoryReadStore();
    const positions = (await log.readAll({})).map((e) => e.position);
    const p = positions[Math.floor(positions.length / 2)]!;
    const behind = positions[Math.floor(positions.length / 2) - 1]!;
    await replayInto(log, live, [audit], behind);
    const others = new MemoryReadStore();
    await replayInto(log, others, projections.filter((x) => x.name !== "audit"), p);
    const past = new PastAuditIndex(others, live.guarded(), p).guarded();
    await expect(history(pastLog(log, p), past, objects[0]!, 10)).rejects.toBeInstanceOf(ReadStoreUnavailableError);
    await expect(trace(pastLog(log, p), past, requests[0]!, 10)).rejects.toThrow(/has not reached position/);
    expect(await past.serving(["arqs", "audit"])).toEqual([true, false]);
    expect(await past.getCheckpoint("audit")).toBeUndefined();
    // A rebuild of the live index (not serving meanwhile) is refused as well.
    await replayInto(log, live, [audit], head);
    expect(await past.serving(["audit", "arqs"])).toEqual([true, true]);
    expect(await past.getCheckpoint("audit")).toBe(p);
    await live.unmarkServing("audit");
    await expect(history(pastLog(log, p), past, objects[0]!, 10)).rejects.toBeInstanceOf(ReadStoreUnavailableError);
    expect(await past.serving(["audit"])).toEqual([false]);
    // The past never writes the live index.
    await expect(past.applyBatch("audit", [], p)).rejects.toThrow(/not written here/);
  });
});
