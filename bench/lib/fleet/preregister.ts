import { join } from "node:path";
import { LmdbEventStore } from "../../../src/infra/eventstore/lmdb.js";
import { HostWriter } from "../host-writer.js";
import type { SimulatedHost } from "./host-devices.js";

/**
 * Writes each host's first report into the embedded log at `dataDir` before the server starts,
 * exactly as the service would (the host decider, through HostWriter), `concurrency` hosts at a
 * time. The server then starts on a registered fleet, as after a restart: the agents' first
 * reports diff to nothing.
 */
export async function preregister(dataDir: string, hosts: readonly SimulatedHost[], concurrency = 64): Promise<number> {
  const store = await LmdbEventStore.open(join(dataDir, "events"));
  const writer = new HostWriter(store);
  let next = 0;
  let events = 0;
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < hosts.length; i = next++) {
          const written = await writer.report(hosts[i]!.hostname, hosts[i]!.report());
          events += written.length;
        }
      }),
    );
  } finally {
    await store.close();
  }
  return events;
}
