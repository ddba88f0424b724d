/**
 * A full reconcile (`cyborg-es placement reconcile [--dry-run]`): every host the log knows is
 * made to match from scratch (nothing remembered: every provider's inventory and traits are read),
 * then Placement is searched for Cyborg providers (OWNER_CYBORG, uuid = uuid3(name)) that no host
 * wants, outside the trees already handled: those are deleted, or kept reserved while allocated.
 * It repairs drift made by hand; with dryRun it only says what it would change.
 */
import { desiredProviders } from "../../domain/inventory/resource-providers.js";
import { OWNER_CYBORG } from "../../domain/shared/traits.js";
import type { EventStore } from "../../infra/eventstore/port.js";
import type { PlacementClient } from "./client.js";
import { isTransient } from "./errors.js";
import type { ProviderChange } from "./changes.js";
import { HostSyncer, isCyborgProvider, type MissingComputeNode } from "./host-sync.js";
import { HOST_STREAM_PREFIX, hostOfStream, HostStates } from "./host-states.js";

export interface ReconcileOptions {
  store: EventStore;
  client: PlacementClient;
  missingComputeNode: MissingComputeNode;
  dryRun?: boolean;
  /** Hosts made to match at once (default 4). */
  concurrency?: number;
  /** After each host (and once for the search for orphans): done out of total. */
  onProgress?: (done: number, total: number, host: string) => void;
}

export interface ReconcileReport {
  dryRun: boolean;
  hosts: number;
  changes: ProviderChange[];
  waiting: Array<{ host: string; reason: string }>;
  /** Hosts Placement refused (the others were reconciled). */
  errors: Array<{ host: string; message: string }>;
}

export async function reconcilePlacement(o: ReconcileOptions): Promise<ReconcileReport> {
  const dryRun = o.dryRun ?? false;
  const hosts = await listHosts(o.store);
  const syncer = new HostSyncer({ client: o.client, missingComputeNode: o.missingComputeNode, dryRun });
  const states = new HostStates(o.store, 1);
  const report: ReconcileReport = { dryRun, hosts: hosts.length, changes: [], waiting: [], errors: [] };
  const wanted = new Set<string>();
  const roots = new Set<string>();
  const total = hosts.length + 1;
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < hosts.length) {
      const host = hosts[next++]!;
      const desired = desiredProviders((await states.load(host)).state);
      for (const d of desired) wanted.add(d.uuid);
      try {
        const r = await syncer.syncHost(host, desired);
        report.changes.push(...r.changes);
        report.waiting.push(...r.waiting.map((reason) => ({ host, reason })));
      } catch (err) {
        if (isTransient(err)) throw err;
        report.errors.push({ host, message: (err as Error).message });
      }
      const root = syncer.computeNodeOf(host);
      if (root) roots.add(root);
      o.onProgress?.(++done, total, host);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 4) }, worker));

  for (const p of await o.client.listProviders({ required: OWNER_CYBORG })) {
    if (!isCyborgProvider(p) || wanted.has(p.uuid) || roots.has(p.root_provider_uuid)) continue;
    const root = p.root_provider_uuid === p.uuid ? null : await o.client.getProvider(p.root_provider_uuid);
    const host = root?.name ?? "(no host)";
    try {
      const r = await syncer.removeOrphan(host, p);
      report.changes.push(...r.changes);
      report.waiting.push(...r.waiting.map((reason) => ({ host, reason })));
    } catch (err) {
      if (isTransient(err)) throw err;
      report.errors.push({ host, message: (err as Error).message });
    }
  }
  o.onProgress?.(++done, total, "(orphans)");
  return report;
}

/** Every host with a stream, from the log (DeviceDiscovered is the first event of a host's devices). */
export async function listHosts(store: EventStore): Promise<string[]> {
  const hosts = new Set<string>();
  let after: bigint | undefined;
  for (;;) {
    const page = await store.readAll({ after, maxCount: 10_000, filter: { eventTypes: ["DeviceDiscovered"], streamPrefixes: [HOST_STREAM_PREFIX] } });
    for (const e of page) {
      const h = hostOfStream(e.stream);
      if (h !== null) hosts.add(h);
    }
    if (page.length < 10_000) return [...hosts].sort();
    after = page.at(-1)!.position;
  }
}
