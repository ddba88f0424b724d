import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessPubSub } from "../../src/infra/pubsub/in-process.js";
import type { PubSub } from "../../src/infra/pubsub/port.js";
import { RedisPubSub } from "../../src/infra/pubsub/redis.js";
import { startRedis, type TestRedis } from "../support/redis.js";

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => redis?.stop());

const adapters: Array<[string, () => PubSub]> = [
  ["in-process", () => new InProcessPubSub()],
  ["redis", () => new RedisPubSub(redis.url)],
];

describe.each(adapters)("PubSub: %s", (_, make) => {
  it("delivers what is published after ready, to every subscriber of the topic, as JSON", async () => {
    const pubsub = make();
    const a = pubsub.subscribe<{ n: number }>("t1");
    const b = pubsub.subscribe<{ n: number }>("t1");
    const other = pubsub.subscribe("t2");
    await Promise.all([a.ready, b.ready, other.ready]);
    const sent = { n: 1, when: new Date(0) };
    await pubsub.publish("t1", sent);
    await pubsub.publish("t1", { n: 2 });
    const ia = a[Symbol.asyncIterator]();
    expect((await ia.next()).value).toEqual({ n: 1, when: "1970-01-01T00:00:00.000Z" });
    expect((await ia.next()).value).toEqual({ n: 2 });
    const ib = b[Symbol.asyncIterator]();
    expect((await ib.next()).value).toMatchObject({ n: 1 });
    await a.close();
    expect(await ia.next()).toEqual({ value: undefined, done: true });
    await pubsub.publish("t1", { n: 3 });
    expect((await ib.next()).value).toEqual({ n: 2 });
    expect((await ib.next()).value).toEqual({ n: 3 });
    await pubsub.close();
  });

  it("ends a pending iteration on close", async () => {
    const pubsub = make();
    const s = pubsub.subscribe("t");
    await s.ready;
    const pending = s[Symbol.asyncIterator]().next();
    await s.close();
    expect(await pending).toEqual({ value: undefined, done: true });
    await pubsub.close();
  });
});
