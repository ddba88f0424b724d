/**
 * Makes Placement match one host's desired providers (src/domain/inventory/resource-providers.ts),
 * idempotently: it reads what the host's compute-node tree holds, writes only what differs, and
 * writes nothing when they match. Used by the sync (for each host whose inventory changed) and by
 * `cyborg-es placement reconcile` (every host, nothing remembered, optionally a dry run).
 *
 * - Ours: a provider of the tree whose uuid is uuid3(NAMESPACE_DNS, its name), as Cyborg makes
 *   them (the OWNER_CYBORG trait is not relied on: a provider created by a write cut short may lack it).
 * - Each provider is made to match by provider-sync.ts (generations, and never under a VM).
 */
import { v5 } from "uuid";
import { INVENTORY_NAMESPACE, rpUuidFor } from "../../domain/inventory/ids.js";
import type { DesiredProvider } from "../../domain/inventory/resource-providers.js";
import { noChanges, type HostSyncResult } from "./changes.js";
import type { PlacementClient, ProviderRecord } from "./client.js";
import { desiredInventories } from "./inventories.js";
import { ComputeNodeNotFoundError, isTransient, PlacementRefusedError, type ProviderRef } from "./errors.js";
import { ProviderSyncer } from "./provider-sync.js";

export type MissingComputeNode = "wait" | "create";

export interface HostSyncerOptions {
  client: PlacementClient;
  missingComputeNode: MissingComputeNode;
  /** Report what would change, write nothing. */
  dryRun?: boolean;
}

/** The root provider created for a host without a compute node (PLACEMENT_MISSING_COMPUTE_NODE=create). */
export const standaloneComputeNodeUuid = (hostname: string) => v5(`placement-compute-node:${hostname}`, INVENTORY_NAMESPACE);

/** A provider Cyborg made: its uuid is derived from its name. */
export const isCyborgProvider = (p: { uuid: string; name: string }) => p.uuid === rpUuidFor(p.name);

export class HostSyncer {
  private readonly computeNodes = new Map<string, string>();
  /** Host -> the providers (uuid -> name) its last successful sync left in Placement. */
  private readonly synced = new Map<string, Map<string, string>>();
  private readonly client: PlacementClient;
  private readonly dryRun: boolean;
  private readonly providers: ProviderSyncer;

  constructor(private readonly options: HostSyncerOptions) {
    this.client = options.client;
    this.dryRun = options.dryRun ?? false;
    this.providers = new ProviderSyncer(this.client, this.dryRun);
  }

  /** The host's compute-node provider uuid, once a sync found it. */
  computeNodeOf(host: string): string | undefined {
    return this.computeNodes.get(host);
  }

  /** Forget what was seen of the host (after a failure, the next sync reads everything again). */
  forget(host: string, desired: readonly DesiredProvider[] = []): void {
    this.computeNodes.delete(host);
    for (const uuid of this.synced.get(host)?.keys() ?? []) this.providers.known.forget(uuid);
    this.synced.delete(host);
    for (const d of desired) this.providers.known.forget(d.uuid);
  }

  /**
   * Cold (first sync of the host here, or after a failure): list the host's tree, and compare every
   * provider in it. Warm: the providers the last sync left are known with the generation of the
   * last write, so only what changed is written (a stale generation is a 409: read, then write)
   * and no listing is needed; drift made by hand meanwhile is for `placement reconcile`. A
   * provider found gone (404) sends the host back to the cold path.
   */
  async syncHost(host: string, desired: readonly DesiredProvider[], signal?: AbortSignal): Promise<HostSyncResult> {
    for (let attempt = 1; ; attempt++) {
      const last = this.dryRun ? undefined : this.synced.get(host);
      const compute = this.computeNodes.get(host);
      const out = noChanges(host);
      try {
        if (last && compute) await this.syncWarm(host, desired, compute, last, out, signal);
        else await this.syncCold(host, desired, out, signal);
      } catch (err) {
        if (!(err instanceof ProviderGone) || attempt >= 3) throw err instanceof ProviderGone ? err.cause : err;
        this.forget(host, desired);
        continue;
      }
      if (!this.dryRun) this.synced.set(host, new Map([...desired, ...out.kept].map((p) => [p.uuid, p.name] as const)));
      return out;
    }
  }

  private async syncCold(host: string, desired: readonly DesiredProvider[], out: HostSyncResult, signal?: AbortSignal, lookedAgain = false): Promise<void> {
    const compute = await this.computeNode(host, desired.length > 0, out, signal);
    if (compute === null) return;
    const tree = compute.planned ? [] : await this.client.listProviders({ in_tree: compute.uuid }, signal);
    if (!compute.planned && !tree.some((p) => p.uuid === compute.uuid)) {
      // The compute node was deleted and maybe made again under another uuid: look it up once more.
      this.computeNodes.delete(host);
      if (!lookedAgain) return this.syncCold(host, desired, out, signal, true);
      throw new ComputeNodeNotFoundError(host);
    }
    const ours = new Map(tree.filter((p) => p.uuid !== compute.uuid && isCyborgProvider(p)).map((p) => [p.uuid, p] as const));
    const wanted = new Set(desired.map((d) => d.uuid));
    await settle([
      ...desired.map((d) => this.providers.sync(host, d, compute.uuid, ours.get(d.uuid) ?? null, out, signal)),
      ...[...ours.values()].filter((p) => !wanted.has(p.uuid)).map((p) => this.providers.remove(host, p, out, signal)),
    ]);
  }

  private async syncWarm(host: string, desired: readonly DesiredProvider[], computeUuid: string, last: ReadonlyMap<string, string>, out: HostSyncResult, signal?: AbortSignal): Promise<void> {
    const wanted = new Set(desired.map((d) => d.uuid));
    const gone = (ref: ProviderRef) => (err: unknown) => {
      throw err instanceof PlacementRefusedError && err.answer.status === 404 ? new ProviderGone(ref, err) : err;
    };
    await settle([
      ...desired.map((d) => {
        if (!last.has(d.uuid)) return this.providers.sync(host, d, computeUuid, null, out, signal);
        const ref = { uuid: d.uuid, name: d.name };
        const generation = this.providers.known.generationOf(d.uuid);
        return this.providers.converge(host, ref, generation, { inventories: desiredInventories(d), traits: d.traits }, out, signal).catch(gone(ref));
      }),
      ...[...last].filter(([uuid]) => !wanted.has(uuid)).map(([uuid, name]) =>
        this.providers.remove(host, { uuid, name, generation: this.providers.known.generationOf(uuid) ?? -1, parent_provider_uuid: computeUuid, root_provider_uuid: computeUuid }, out, signal),
      ),
    ]);
  }

  /** Deletes (or, while allocated, reserves) providers that nothing wants any more: the reconcile's orphans. */
  async removeOrphan(host: string, p: ProviderRecord, signal?: AbortSignal): Promise<HostSyncResult> {
    const out = noChanges(host);
    await this.providers.remove(host, p, out, signal);
    return out;
  }

  private async computeNode(host: string, needed: boolean, out: HostSyncResult, signal?: AbortSignal): Promise<{ uuid: string; planned?: boolean } | null> {
    const cached = this.computeNodes.get(host);
    if (cached) return { uuid: cached };
    const [found] = await this.client.listProviders({ name: host }, signal);
    if (found) {
      this.computeNodes.set(host, found.uuid);
      return { uuid: found.uuid };
    }
    if (!needed) return null;
    if (this.options.missingComputeNode === "wait") throw new ComputeNodeNotFoundError(host);
    const uuid = standaloneComputeNodeUuid(host);
    out.changes.push({ action: "create-compute-node", host, uuid, name: host, detail: "root provider for standalone use (PLACEMENT_MISSING_COMPUTE_NODE=create)" });
    if (this.dryRun) return { uuid, planned: true };
    try {
      await this.client.createProvider({ uuid, name: host, parentUuid: null }, signal);
    } catch (err) {
      if (!(err instanceof PlacementRefusedError && err.answer.status === 409)) throw err;
      out.changes.pop();
      const [again] = await this.client.listProviders({ name: host }, signal);
      if (!again) throw err;
      this.computeNodes.set(host, again.uuid);
      return { uuid: again.uuid };
    }
    this.computeNodes.set(host, uuid);
    return { uuid };
  }
}

/** A provider the warm path expected is not in Placement (deleted by hand, a new database): go cold. */
class ProviderGone extends Error {
  constructor(
    ref: ProviderRef,
    override readonly cause: PlacementRefusedError,
  ) {
    super(`provider ${ref.name} (${ref.uuid}) is no longer in Placement`);
  }
}

/** Waits for all; rethrows a transient failure first (so the whole batch waits), else the first one. */
async function settle(work: Array<Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(work);
  const errors = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (errors.length) throw errors.find(isTransient) ?? errors[0];
}
