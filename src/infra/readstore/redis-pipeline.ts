/**
 * Pipelines on one Redis server or on a Redis Cluster. A cluster runs a pipeline on one node only,
 * so there a read's commands are grouped by the hash tag of their key (one projection's keys
 * share one: one slot), one pipeline a group, all sent at once, and the replies put back in the
 * order they were asked.
 */
import type { Cluster, Redis } from "ioredis";
import { isCluster, type RedisClient } from "../redis-client.js";

export type Pipeline = ReturnType<Redis["pipeline"]>;
type Reply = [error: Error | null, result: unknown];

export function pipelineOf(client: RedisClient): Pipeline {
  return isCluster(client) ? slotPipeline(client) : client.pipeline();
}

/** The part of a key Redis Cluster hashes: the first non-empty `{...}`, or the whole key. */
export function hashTag(key: string): string {
  const open = key.indexOf("{");
  if (open >= 0) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) return key.slice(open + 1, close);
  }
  return key;
}

/** The key a command names first (ZINTER, sent with call(), names its count before its keys). */
function keyOf(method: string, args: unknown[]): string {
  if (method !== "call") return String(args[0]);
  return String(String(args[0]).toUpperCase() === "ZINTER" ? args[2] : args[1]);
}

function slotPipeline(client: Cluster): Pipeline {
  const groups = new Map<string, { p: Pipeline; at: number[] }>();
  let asked = 0;
  const exec = async (): Promise<Reply[]> => {
    const replies: Reply[] = new Array<Reply>(asked);
    await Promise.all(
      [...groups.values()].map(async ({ p, at }) => {
        const got = (await p.exec()) ?? [];
        at.forEach((index, i) => (replies[index] = got[i] as Reply));
      }),
    );
    return replies;
  };
  const proxy: Pipeline = new Proxy({} as Pipeline, {
    get(_, method) {
      if (method === "exec") return exec;
      if (method === "length") return asked;
      return (...args: unknown[]) => {
        const tag = hashTag(keyOf(String(method), args));
        let group = groups.get(tag);
        if (!group) groups.set(tag, (group = { p: client.pipeline(), at: [] }));
        (group.p as unknown as Record<string, (...a: unknown[]) => unknown>)[String(method)]!(...args);
        group.at.push(asked++);
        return proxy;
      };
    },
  });
  return proxy;
}
