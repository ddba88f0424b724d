/**
 * A replay leaves out the streams that ended before its point (src/reactors/projector/ended-streams.ts),
 * for the models that say how their streams end (Projection.ends). The claim is checked, not
 * trusted: at every position of two logs (Nova-style waves of ARQs, and the scripted life of a
 * host through the API) the models replayed without those streams equal the models replayed from
 * every event, in memory and in a real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generate, parseArgs } from "../../bench/projections.js";
import { projections } from "../../projections/index.js";
import { replayInto } from "../../src/audit/replay.js";
import { streamPrefix } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { endedStreams } from "../../src/reactors/projector/ended-streams.js";
import type { Projection } from "../../src/reactors/projector/projection.js";
import { Slots } from "../../src/reactors/projector/slots.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startTestService, type TestService } from "../api/harness.js";
import { runScenario } from "../audit/scenario.js";
import { startRedis, type TestRedis } from "../support/redis.js";

const claiming = projections.filter((p) => p.ends);
/** The same models without the claim: replayed from every event. */
const plain: Projection[] = claiming.map(({ ends: _ends, ...p }) => p);

async function dumps(store: ReadStore, models: readonly Projection[]) {
  const out: Record<string, unknown> = {};
  for (const p of models) out[p.name] = (await store.dump(p.name)).keys;
  return out;
}

async function replayed(log: EventStore, models: readonly Projection[], upTo: bigint, target: ReadStore = new MemoryReadStore()) {
  await replayInto(log, target, models, upTo);
  return dumps(target, models);
}

/** Waves of ARQs created, bound, unbound and deleted, as bench:projections writes them. */
async function wavesLog(): Promise<MemoryEventStore> {
  const log = new MemoryEventStore();
  await generate(log, parseArgs(["--hosts", "2", "--devices", "2", "--arqs", "24", "--wave", "8"]));
  return log;
}

describe("the streams a replay leaves out", () => {
  it("the ARQ model claims it: an ARQ's stream ends with its deletion", () => {
    expect(claiming.map((p) => [p.name, p.ends])).toEqual([["arqs", { prefix: streamPrefix.arq, types: ["ArqDeleted"] }]]);
  });

  it("are the streams whose last event, at or before the point, ends them; bounded; none when the store cannot tell", async () => {
    const log = await wavesLog();
    const head = (await log.headPosition())!;
    const slots = new Slots(projections).all;
    const arqs = slots.find((s) => s.projection.name === "arqs")!;
    const deletions = (await log.readAll({ filter: { eventTypes: ["ArqDeleted"] } })).map((e) => [e.stream, e.position] as const);
    expect(deletions.length).toBe(24);

    for (const upTo of [head, deletions[10]![1], deletions[10]![1] - 1n, 1n]) {
      const ended = await endedStreams(log, slots, upTo);
      const expected = deletions.filter(([, p]) => p <= upTo).map(([s]) => s);
      expect([...(ended.get(arqs) ?? [])].sort()).toEqual(expected.sort());
      // Only the models that claim it.
      expect([...ended.keys()].every((s) => s === arqs)).toBe(true);
    }
    expect((await endedStreams(log, slots, head, 5)).get(arqs)!.size).toBe(5);
    expect((await endedStreams({ readStreamEnds: async () => undefined }, slots, head)).size).toBe(0);
  });

  it("leave the models as a replay of every event does, at every position (waves of ARQs, memory)", async () => {
    const log = await wavesLog();
    const head = Number((await log.headPosition())!);
    let skippedSomewhere = false;
    for (let p = 1; p <= head; p++) {
      const upTo = BigInt(p);
      expect(await replayed(log, claiming, upTo), `at position ${p}`).toEqual(await replayed(log, plain, upTo));
      skippedSomewhere ||= ((await endedStreams(log, new Slots(claiming).all, upTo)).size ?? 0) > 0;
    }
    expect(skippedSomewhere).toBe(true);
  });

  describe("over the API's log", () => {
    let t: TestService;
    let redis: TestRedis;

    beforeAll(async () => {
      redis = await startRedis();
      t = await startTestService();
      await runScenario(t, async () => undefined);
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await redis?.stop();
    });

    it("at every position, in memory", async () => {
      const log = t.service.store;
      const head = Number((await log.headPosition())!);
      const ended = await endedStreams(log, new Slots(claiming).all, BigInt(head));
      expect([...ended.values()].some((s) => s.size > 0)).toBe(true);
      for (let p = 1; p <= head; p++) {
        expect(await replayed(log, claiming, BigInt(p)), `at position ${p}`).toEqual(await replayed(log, plain, BigInt(p)));
      }
    }, 120_000);

    it("in a real Redis, at the head and around each deletion", async () => {
      const log = t.service.store;
      const head = (await log.headPosition())!;
      const deletions = (await log.readAll({ filter: { eventTypes: ["ArqDeleted"] } })).map((e) => e.position);
      const points = [...new Set([head, ...deletions.flatMap((p) => [p - 1n, p, p + 1n])])].filter((p) => p > 0n && p <= head);
      const a = new RedisReadStore(`${redis.url}/1`);
      const b = new RedisReadStore(`${redis.url}/2`);
      try {
        for (const p of points) {
          expect(await replayed(log, claiming, p, a), `at position ${p}`).toEqual(await replayed(log, plain, p, b));
        }
      } finally {
        await a.close();
        await b.close();
      }
    }, 120_000);
  });
});
