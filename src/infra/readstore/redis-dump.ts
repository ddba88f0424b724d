/** A projection's keys in Redis: scanned (to drop them) and dumped whole (ReadStore.dump, for the differential tests). */
import { isCluster, type RedisClient as Redis } from "../redis-client.js";
import { pipelineOf } from "./redis-pipeline.js";
import type { StoreDump } from "./port.js";
import { keyPrefix, metaKey } from "./keys-and-cursors.js";
import { decodeHash, pairs, run } from "./redis-reads.js";

/** Yields the keys as Redis names them (behind `prefix`); on a cluster, from every master. */
export async function* scanKeys(client: Redis, projection: string, prefix = ""): AsyncGenerator<string[]> {
  const match = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}${keyPrefix(projection)}*`;
  for (const node of await serversOf(client)) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", match, "COUNT", 1000);
      cursor = next;
      yield keys;
    } while (cursor !== "0");
  }
}

/** The servers that hold keys: the one, or a cluster's masters (known once it is connected). */
async function serversOf(client: Redis): Promise<Array<Pick<Redis, "scan">>> {
  if (!isCluster(client)) return [client];
  if (client.status !== "ready") await client.ping();
  return client.nodes("master");
}

/** Every key of the projection but its meta key, sorted, with its hash or sorted set. */
export async function dumpKeys(client: Redis, projection: string, prefix = ""): Promise<StoreDump["keys"]> {
  const meta = metaKey(projection);
  const names: string[] = [];
  for await (const batch of scanKeys(client, projection, prefix)) names.push(...batch.map((k) => k.slice(prefix.length)).filter((k) => k !== meta));
  names.sort();
  const types = names.length ? await run<string>(names.reduce((p, k) => p.type(prefix + k), pipelineOf(client))) : [];
  const p = pipelineOf(client);
  names.forEach((k, i) => (types[i] === "hash" ? p.hgetall(prefix + k) : p.zrange(prefix + k, "0", "-1", "WITHSCORES")));
  const values = names.length ? await run<unknown>(p) : [];
  const keys: StoreDump["keys"] = {};
  names.forEach((k, i) => {
    if (types[i] === "hash") {
      const doc = decodeHash(values[i] as Record<string, string>) ?? {};
      const hash: Record<string, unknown> = {};
      for (const f of Object.keys(doc).sort()) hash[f] = doc[f];
      keys[k] = { hash };
    } else {
      keys[k] = { zset: pairs(values[i]) };
    }
  });
  return keys;
}
