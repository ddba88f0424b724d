import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { LogFollower } from "../../src/reactors/follower/log-follower.js";
import type { LogFollowerOptions } from "../../src/reactors/follower/options.js";
import { readFollowerStatus } from "../../src/reactors/follower/status.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import { createLogger } from "../../src/infra/logger.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";

const meta = { principal: "test", correlationId: "c", causationId: "c", at: "2026-11-24T00:00:00.000Z" };
const log = createLogger("silent");

async function append(es: MemoryEventStore, stream: string, type: string, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await es.append(stream, [{ id: randomUUID(), type, data: { i }, metadata: meta }], "any");
}

const followers: LogFollower[] = [];
function follower(es: MemoryEventStore, rs: MemoryReadStore, handle: LogFollowerOptions["handle"], extra: Partial<LogFollowerOptions> = {}) {
  const f = new LogFollower({
    name: "test-follower",
    events: es,
    checkpoints: rs,
    filter: { streamPrefixes: ["host-"] },
    handle,
    log,
    backoff: { minMs: 5, maxMs: 20 },
    idleCommitMs: 10,
    statusEveryMs: 20,
    ...extra,
  });
  followers.push(f);
  return f;
}

afterEach(async () => {
  for (const f of followers.splice(0)) await f.stop();
});

describe("checkpointed log follower", () => {
  it("hands the matching events in order, in batches, and records its checkpoint past the others", async () => {
    const es = new MemoryEventStore();
    const rs = new MemoryReadStore();
    await append(es, "host-a", "X", 3);
    await append(es, "arq-1", "Y", 2);
    const seen: string[] = [];
    const batches: number[] = [];
    const f = follower(es, rs, async (batch) => {
      batches.push(batch.length);
      for (const e of batch) seen.push(`${e.stream}:${e.position}`);
    });
    await f.start();
    await f.caughtUp(2000);
    await append(es, "host-b", "X", 2);
    await append(es, "arq-2", "Y");
    await f.caughtUp(2000);
    expect(seen).toEqual(["host-a:1", "host-a:2", "host-a:3", "host-b:6", "host-b:7"]);
    expect(batches.reduce((a, b) => a + b)).toBe(5);
    await expect.poll(() => rs.getCheckpoint("test-follower")).toBe(8n);
    expect(f.status()).toMatchObject({ state: "live", lagEvents: 0, lagMs: 0, retries: 0, lastError: null, checkpoint: "8" });
  });

  it("hands the same batch again after a failure, with a backoff, until it succeeds: nothing skipped, nothing twice", async () => {
    const es = new MemoryEventStore();
    const rs = new MemoryReadStore();
    await append(es, "host-a", "X", 4);
    let down = true;
    let attempts = 0;
    const handled: bigint[] = [];
    const f = follower(es, rs, async (batch: readonly RecordedEvent[]) => {
      attempts++;
      if (down) throw new Error("target down");
      handled.push(...batch.map((e) => e.position));
    });
    await f.start();
    await expect.poll(() => f.status().state).toBe("retrying");
    expect(f.status()).toMatchObject({ error: "target down", lastError: { message: "target down" }, lagEvents: 4 });
    await expect.poll(() => attempts).toBeGreaterThan(3);
    down = false;
    await f.caughtUp(2000);
    expect(handled).toEqual([1n, 2n, 3n, 4n]);
    expect(f.status()).toMatchObject({ state: "live", retries: 0, lastError: { message: "target down" } });
    expect(f.status().error).toBeUndefined();
  });

  it("resumes from its checkpoint after a restart, and records the handler's writes with it", async () => {
    const es = new MemoryEventStore();
    const rs = new MemoryReadStore();
    await append(es, "host-a", "X", 2);
    const first: bigint[] = [];
    const a = follower(es, rs, async (batch) => {
      first.push(...batch.map((e) => e.position));
      return [{ op: "put", key: "{test-follower}:state", fields: { last: batch.at(-1)!.position.toString() } }];
    });
    await a.start();
    await a.caughtUp(2000);
    await a.stop();
    await append(es, "host-a", "X", 2);
    const second: bigint[] = [];
    const b = follower(es, rs, async (batch) => {
      second.push(...batch.map((e) => e.position));
    });
    await b.start();
    await b.caughtUp(2000);
    expect(first).toEqual([1n, 2n]);
    expect(second).toEqual([3n, 4n]);
    expect(await rs.getDocs(["{test-follower}:state"])).toEqual([{ last: "2" }]);
  });

  it("starts over from the beginning when its checkpoint is lost", async () => {
    const es = new MemoryEventStore();
    const rs = new MemoryReadStore();
    await append(es, "host-a", "X", 2);
    const handled: bigint[] = [];
    const f = follower(es, rs, async (batch) => {
      handled.push(...batch.map((e) => e.position));
    });
    await f.start();
    await f.caughtUp(2000);
    await rs.drop("test-follower");
    await append(es, "host-a", "X");
    await expect.poll(() => handled.length).toBeGreaterThanOrEqual(5);
    expect(handled).toEqual([1n, 2n, 3n, 1n, 2n, 3n].slice(0, handled.length));
  });

  it("publishes its status for other processes", async () => {
    const es = new MemoryEventStore();
    const rs = new MemoryReadStore();
    await append(es, "host-a", "X");
    const f = follower(es, rs, async () => undefined);
    await f.start();
    await f.caughtUp(2000);
    await expect.poll(async () => (await readFollowerStatus(rs, "test-follower"))?.checkpoint).toBe("1");
    await f.stop();
    expect(await readFollowerStatus(rs, "test-follower")).toMatchObject({ name: "test-follower", state: "stopped" });
  });
});

describe("a follower's options", () => {
  it("take their defaults when passed as undefined (a caller's unset tuning): it publishes its status and records idle stretches", async () => {
    const es = new MemoryEventStore();
    const rs = new MemoryReadStore();
    await append(es, "arq-1", "Y", 2);
    const f = follower(es, rs, async () => undefined, { statusEveryMs: undefined, idleCommitMs: undefined, maxBatch: undefined });
    await f.start();
    await expect.poll(() => readFollowerStatus(rs, "test-follower"), { timeout: 20_000 }).toMatchObject({ name: "test-follower" });
    await expect.poll(() => rs.getCheckpoint("test-follower"), { timeout: 20_000 }).toBe(2n);
  });
});

describe("a follower whose checkpoint is in the event log", () => {
  const WAIT = 20_000;
  const checkpoints = (es: MemoryEventStore) => es.readStream("follower-test-follower");
  const durable = (es: MemoryEventStore, rs: MemoryReadStore, handle: LogFollowerOptions["handle"], extra: Partial<LogFollowerOptions> = {}) =>
    follower(es, rs, handle, { checkpointIn: "event-log", coalesceMs: 0, ...extra });

  it("resumes from it after a restart with an empty read store, with the state it saved", async () => {
    const es = new MemoryEventStore();
    await append(es, "host-a", "X", 2);
    const handled: bigint[] = [];
    let count = 0;
    const a = durable(es, new MemoryReadStore(), async (batch) => {
      handled.push(...batch.map((e) => e.position));
      count += batch.length;
    }, { snapshot: () => ({ count }) });
    await a.start();
    await a.caughtUp(WAIT);
    await a.stop();
    const saved = BigInt(((await checkpoints(es)).at(-1)!.data as { position: string }).position);
    await append(es, "host-a", "X", 2);

    const resumed: Array<{ from: bigint | undefined; state: unknown }> = [];
    const b = durable(es, new MemoryReadStore(), async (batch) => void handled.push(...batch.map((e) => e.position)), {
      resume: (from, state) => resumed.push({ from, state }),
    });
    await b.start();
    await b.caughtUp(WAIT);
    // 1, 2 by the first; its checkpoint events (3, ...) match nothing; then the two new ones, once.
    expect(handled.slice(0, 2)).toEqual([1n, 2n]);
    expect(handled).toHaveLength(4);
    expect(handled.slice(2).every((p) => p > 2n)).toBe(true);
    expect(saved).toBeGreaterThanOrEqual(2n);
    expect(resumed).toEqual([{ from: saved, state: { count: 2 } }]);
  });

  it("saves at most once per coalesceMs while events flow, then once at stop, and never for events that match nothing", async () => {
    const es = new MemoryEventStore();
    const f = durable(es, new MemoryReadStore(), async () => undefined, { coalesceMs: 3_600_000, maxBatch: 1 });
    await f.start();
    for (let i = 0; i < 5; i++) {
      await append(es, "host-a", "X");
      await f.caughtUp(WAIT);
    }
    // The first batch saves at once; the next ones are due an hour later.
    expect((await checkpoints(es)).map((e) => e.data)).toEqual([expect.objectContaining({ position: "1" })]);
    await append(es, "arq-1", "Y", 3);
    await f.caughtUp(WAIT);
    // Waiting for events, the next save an hour after the first: none before.
    expect(await f.nextWait()).toBeGreaterThan(WAIT);
    expect(await checkpoints(es)).toHaveLength(1);
    await f.stop();
    const saved = await checkpoints(es);
    expect(saved).toHaveLength(2);
    // At stop: everything handled, the events that matched nothing included.
    expect(BigInt((saved[1]!.data as { position: string }).position)).toBe((await es.headPosition())! - 1n);
    expect(f.status()).toMatchObject({ state: "stopped", checkpoint: (saved[1]!.data as { position: string }).position });
  });

  it("does not save in a loop when idle: its own checkpoint events match nothing", async () => {
    const es = new MemoryEventStore();
    await append(es, "host-a", "X", 3);
    const f = durable(es, new MemoryReadStore(), async () => undefined);
    await f.start();
    await f.caughtUp(WAIT);
    await expect.poll(async () => (await checkpoints(es)).length, { timeout: WAIT }).toBeGreaterThan(0);
    const before = (await checkpoints(es)).length;
    await f.caughtUp(WAIT);
    // Waiting for events with no save due: none comes until an event matches.
    expect(await f.nextWait()).toBeUndefined();
    expect(await checkpoints(es)).toHaveLength(before);
  });

  it("two instances never both move it: the one refused starts over from the stored checkpoint", async () => {
    const es = new MemoryEventStore();
    await append(es, "host-a", "X");
    const resumes: string[] = [];
    const make = (who: string) =>
      durable(es, new MemoryReadStore(), async () => undefined, { resume: (from) => resumes.push(`${who}@${from ?? "-"}`) });
    const a = make("a");
    await a.start();
    await a.caughtUp(WAIT);
    await expect.poll(async () => (await checkpoints(es)).length, { timeout: WAIT }).toBe(1);
    const b = make("b");
    await b.start();
    await b.caughtUp(WAIT);
    await append(es, "host-a", "X");
    await a.caughtUp(WAIT);
    await b.caughtUp(WAIT);
    // Both handled the new event (at least once); one saved it, the other was refused and reloaded.
    await expect.poll(() => resumes.length, { timeout: WAIT }).toBe(3);
    const saved = await checkpoints(es);
    expect(saved.map((e) => e.revision)).toEqual([0, 1]);
    expect(resumes[2]).toMatch(new RegExp(`^[ab]@${(saved[1]!.data as { position: string }).position}$`));
  });
});
