/** Shared by the Placement tests: a sync over memory stores, pointed at a real Placement. */
import { randomUUID } from "node:crypto";
import { HostWriter } from "../../bench/lib/host-writer.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { createLogger, type Logger } from "../../src/infra/logger.js";
import { PlacementClient } from "../../src/reactors/placement/client.js";
import { startPlacementSync, type PlacementConfig, type PlacementSync } from "../../src/reactors/placement/sync.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { placementApi, type PlacementServer } from "../support/placement.js";

export const log = createLogger(process.env.TEST_LOG_LEVEL ?? "silent");

export function configFor(server: PlacementServer, o: Partial<PlacementConfig> = {}): PlacementConfig {
  return {
    PLACEMENT_URL: server.url,
    PLACEMENT_TOKEN: server.token,
    PLACEMENT_MISSING_COMPUTE_NODE: "wait",
    PLACEMENT_RETRY_S: 3600,
    PLACEMENT_CONCURRENCY: 4,
    ...o,
  };
}

export interface Requests {
  log: Array<{ method: string; path: string; status: number }>;
  /** Answered requests (a 5xx, e.g. sqlite's "database is locked", is retried: not counted). */
  answered(): Array<{ method: string; path: string; status: number }>;
  /** Answered writes. */
  writes(): Array<{ method: string; path: string; status: number }>;
  clear(): void;
}

/** A client that records every answer, as the sync's. */
export function recordingClient(server: PlacementServer): { client: PlacementClient; requests: Requests } {
  const entries: Requests["log"] = [];
  const client = new PlacementClient({
    url: server.url,
    token: server.token,
    concurrency: 4,
    retries: 2,
    onResponse: ({ method, path, status }) => entries.push({ method, path, status }),
  });
  return {
    client,
    requests: {
      log: entries,
      answered: () => entries.filter((e) => e.status < 500),
      writes: () => entries.filter((e) => e.method !== "GET" && e.status < 500),
      clear: () => void entries.splice(0),
    },
  };
}

export async function startSync(
  server: PlacementServer,
  o: { store?: EventStore; readStore?: ReadStore; config?: Partial<PlacementConfig>; client?: PlacementClient; log?: Logger } = {},
): Promise<{ sync: PlacementSync; store: EventStore; readStore: ReadStore; hosts: HostWriter }> {
  const store = o.store ?? new MemoryEventStore();
  const readStore = o.readStore ?? new MemoryReadStore();
  const sync = await startPlacementSync({
    store,
    readStore,
    config: configFor(server, o.config),
    log: o.log ?? log,
    tuning: { client: o.client, backoff: { minMs: 50, maxMs: 500 }, idleCommitMs: 20, statusEveryMs: 100 },
  });
  return { sync, store, readStore, hosts: new HostWriter(store) };
}

/** What Nova's compute service does at start: a root provider named after the host. */
export async function novaComputeNode(server: PlacementServer, host: string): Promise<string> {
  const uuid = randomUUID();
  const r = await placementApi(server).call("POST", "/resource_providers", { name: host, uuid });
  if (r.status !== 200) throw new Error(`cannot create compute node ${host}: ${r.status} ${JSON.stringify(r.body)}`);
  return uuid;
}

export interface ProviderView {
  uuid: string;
  name: string;
  generation: number;
  parent: string | null;
  inventories: Record<string, { total: number; reserved: number; max_unit: number }>;
  traits: string[];
}

/** A host's tree below its compute node, as Placement's API shows it. */
export async function treeOf(server: PlacementServer, computeUuid: string): Promise<ProviderView[]> {
  const api = placementApi(server);
  const { resource_providers: rps } = await api.get<{ resource_providers: Array<{ uuid: string; name: string; generation: number; parent_provider_uuid: string | null }> }>(
    `/resource_providers?in_tree=${computeUuid}`,
  );
  const out: ProviderView[] = [];
  for (const rp of rps.filter((p) => p.uuid !== computeUuid)) {
    const inv = await api.get<{ inventories: ProviderView["inventories"] }>(`/resource_providers/${rp.uuid}/inventories`);
    const traits = await api.get<{ traits: string[] }>(`/resource_providers/${rp.uuid}/traits`);
    out.push({ uuid: rp.uuid, name: rp.name, generation: rp.generation, parent: rp.parent_provider_uuid, inventories: inv.inventories, traits: traits.traits.sort() });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
