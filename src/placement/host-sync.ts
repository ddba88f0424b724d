/**
 * Makes Placement match one host's desired providers (src/domain/inventory/resource-providers.ts),
 * idempotently: it reads what the host's compute-node tree holds, writes only what differs, and
 * writes nothing when they match. Used by the sync (for each host whose inventory changed) and by
 * `cyborg-es placement reconcile` (every host, nothing remembered, optionally a dry run).
 *
 * - Ours: a provider of the tree whose uuid is uuid3(NAMESPACE_DNS, its name), as Cyborg makes
 *   them (the OWNER_CYBORG trait is not relied on: a provider created by a write cut short may lack it).
 * - Generations: every write names the generation it was computed from; a 409
 *   placement.concurrent_update (Nova claimed meanwhile, say) means read again and recompute.
 *   What the syncer last wrote is remembered per provider with its generation, so an unchanged
 *   provider costs no read beyond the tree listing.
 * - Never under a VM: a provider that is no longer wanted but holds allocations is kept with
 *   reserved = total (and an inventory class still in use is kept the same way); the host is
 *   reported as waiting, so the sync looks again later and deletes it once the allocations are gone.
 */
import pRetry from "p-retry";
import { v5 } from "uuid";
import { INVENTORY_NAMESPACE, rpUuidFor } from "../domain/inventory/ids.js";
import type { DesiredProvider } from "../domain/inventory/resource-providers.js";
import type { Inventories, PlacementClient, ProviderRecord } from "./client.js";
import { desiredInventories, describeInventories, reserveAll, sameInventories, sameSet } from "./inventories.js";
import { ComputeNodeNotFoundError, isConflict, isTransient, PLACEMENT_CODES, PlacementRefusedError, type ProviderRef } from "./errors.js";

export type MissingComputeNode = "wait" | "create";

export interface ProviderChange {
  action: "create-compute-node" | "create" | "move" | "set-inventory" | "set-traits" | "delete" | "keep-in-use";
  host: string;
  uuid: string;
  name: string;
  detail: string;
}

export interface HostSyncResult {
  host: string;
  changes: ProviderChange[];
  /** Why Placement cannot match yet (allocations on a provider to remove): look again later. */
  waiting: string[];
  /** Providers no longer wanted but kept while allocated. */
  kept: ProviderRef[];
}

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

interface Known {
  generation: number;
  inventories: Inventories;
  traits: string[];
}

const MAX_KNOWN = 200_000;

export class HostSyncer {
  private readonly computeNodes = new Map<string, string>();
  private readonly known = new Map<string, Known>();
  /** Host -> the providers (uuid -> name) its last successful sync left in Placement. */
  private readonly synced = new Map<string, Map<string, string>>();
  private readonly client: PlacementClient;
  private readonly dryRun: boolean;

  constructor(private readonly options: HostSyncerOptions) {
    this.client = options.client;
    this.dryRun = options.dryRun ?? false;
  }

  /** The host's compute-node provider uuid, once a sync found it. */
  computeNodeOf(host: string): string | undefined {
    return this.computeNodes.get(host);
  }

  /** Forget what was seen of the host (after a failure, the next sync reads everything again). */
  forget(host: string, desired: readonly DesiredProvider[] = []): void {
    this.computeNodes.delete(host);
    for (const uuid of this.synced.get(host)?.keys() ?? []) this.known.delete(uuid);
    this.synced.delete(host);
    for (const d of desired) this.known.delete(d.uuid);
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
      const out: HostSyncResult = { host, changes: [], waiting: [], kept: [] };
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
      ...desired.map((d) => this.syncProvider(host, d, compute.uuid, ours.get(d.uuid) ?? null, out, signal)),
      ...[...ours.values()].filter((p) => !wanted.has(p.uuid)).map((p) => this.removeProvider(host, p, out, signal)),
    ]);
  }

  private async syncWarm(host: string, desired: readonly DesiredProvider[], computeUuid: string, last: ReadonlyMap<string, string>, out: HostSyncResult, signal?: AbortSignal): Promise<void> {
    const wanted = new Set(desired.map((d) => d.uuid));
    const gone = (ref: ProviderRef) => (err: unknown) => {
      throw err instanceof PlacementRefusedError && err.answer.status === 404 ? new ProviderGone(ref, err) : err;
    };
    await settle([
      ...desired.map((d) => {
        if (!last.has(d.uuid)) return this.syncProvider(host, d, computeUuid, null, out, signal);
        const ref = { uuid: d.uuid, name: d.name };
        const generation = this.known.get(d.uuid)?.generation ?? null;
        return this.converge(host, ref, generation, { inventories: desiredInventories(d), traits: d.traits }, out, signal).catch(gone(ref));
      }),
      ...[...last].filter(([uuid]) => !wanted.has(uuid)).map(([uuid, name]) =>
        this.removeProvider(host, { uuid, name, generation: this.known.get(uuid)?.generation ?? -1, parent_provider_uuid: computeUuid, root_provider_uuid: computeUuid }, out, signal),
      ),
    ]);
  }

  /** Deletes (or, while allocated, reserves) providers that nothing wants any more: the reconcile's orphans. */
  async removeOrphan(host: string, p: ProviderRecord, signal?: AbortSignal): Promise<HostSyncResult> {
    const out: HostSyncResult = { host, changes: [], waiting: [], kept: [] };
    await this.removeProvider(host, p, out, signal);
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

  private async syncProvider(host: string, d: DesiredProvider, computeUuid: string, listed: ProviderRecord | null, out: HostSyncResult, signal?: AbortSignal): Promise<void> {
    const ref: ProviderRef = { uuid: d.uuid, name: d.name };
    const inventories = desiredInventories(d);
    let rec = listed;
    if (!rec) {
      if (this.dryRun) {
        const found = await this.client.getProvider(d.uuid, signal);
        if (!found) {
          out.changes.push({ action: "create", host, ...ref, detail: `under ${host}: ${describeInventories(inventories)}; traits ${d.traits.join(", ")}` });
          return;
        }
        rec = found;
      } else {
        rec = await this.create(ref, computeUuid, signal);
        if (rec.generation === 0) {
          out.changes.push({ action: "create", host, ...ref, detail: `under ${host}` });
          this.remember(d.uuid, { generation: rec.generation, inventories: {}, traits: [] });
        }
      }
    }
    if (rec.name !== d.name || rec.parent_provider_uuid !== computeUuid) {
      out.changes.push({ action: "move", host, ...ref, detail: `was ${rec.name} under ${rec.parent_provider_uuid ?? "no parent"}, now under ${host} (${computeUuid})` });
      if (!this.dryRun) rec = await this.client.updateProvider({ ...ref, parentUuid: computeUuid }, signal);
    }
    await this.converge(host, ref, rec.generation, { inventories, traits: d.traits }, out, signal);
  }

  /** POST, or when the uuid exists already (a write cut short, or a provider elsewhere), that provider. */
  private async create(ref: ProviderRef, parentUuid: string, signal?: AbortSignal): Promise<ProviderRecord> {
    try {
      return await this.client.createProvider({ ...ref, parentUuid }, signal);
    } catch (err) {
      if (!(err instanceof PlacementRefusedError && err.answer.status === 409)) throw err;
      const found = await this.client.getProvider(ref.uuid, signal);
      if (!found) throw err; // the name belongs to another provider
      return found;
    }
  }

  /**
   * Inventory then traits, each written only when it differs. `generation` is the one the tree
   * listing showed (warm: the one of our last write): what we remember is good only if it is
   * still that one; null: read first.
   */
  private async converge(
    host: string,
    ref: ProviderRef,
    generation: number | null,
    want: { inventories: Inventories | ((current: Inventories) => Inventories); traits: readonly string[] | null },
    out: HostSyncResult,
    signal?: AbortSignal,
  ): Promise<void> {
    let expected: number | null = generation;
    await pRetry(
      async () => {
        const cur = await this.current(ref, expected, signal);
        let gen = cur.generation;
        const inventories = typeof want.inventories === "function" ? want.inventories(cur.inventories) : want.inventories;
        if (!sameInventories(cur.inventories, inventories)) {
          const detail = `${describeInventories(cur.inventories)} -> ${describeInventories(inventories)}`;
          if (!this.dryRun) gen = await this.putInventories(ref, gen, cur.inventories, inventories, out, signal);
          out.changes.push({ action: "set-inventory", host, ...ref, detail });
          this.remember(ref.uuid, { generation: gen, inventories, traits: cur.traits }, !this.dryRun);
        }
        const traits = want.traits === null ? cur.traits : [...want.traits];
        if (!sameSet(cur.traits, traits)) {
          const added = traits.filter((t) => !cur.traits.includes(t));
          const removed = cur.traits.filter((t) => !traits.includes(t));
          if (!this.dryRun) gen = await this.client.putTraits(ref, gen, traits, signal);
          out.changes.push({ action: "set-traits", host, ...ref, detail: [added.length ? `+${added.join(" +")}` : "", removed.length ? `-${removed.join(" -")}` : ""].filter(Boolean).join(" ") });
          this.remember(ref.uuid, { generation: gen, inventories: this.known.get(ref.uuid)?.inventories ?? inventories, traits }, !this.dryRun);
        }
      },
      {
        retries: 8,
        minTimeout: 10,
        maxTimeout: 500,
        randomize: true,
        signal,
        shouldRetry: ({ error }) => isConflict(error, PLACEMENT_CODES.concurrentUpdate),
        onFailedAttempt: ({ error }) => {
          if (isConflict(error, PLACEMENT_CODES.concurrentUpdate)) {
            this.known.delete(ref.uuid);
            expected = null;
          }
        },
      },
    );
  }

  /** A class that still holds allocations cannot go: keep it, reserved = total, and wait. */
  private async putInventories(ref: ProviderRef, gen: number, cur: Inventories, want: Inventories, out: HostSyncResult, signal?: AbortSignal): Promise<number> {
    try {
      return await this.client.putInventories(ref, gen, want, signal);
    } catch (err) {
      if (!isConflict(err, PLACEMENT_CODES.inventoryInUse)) throw err;
      const kept = Object.entries(cur).filter(([rc]) => !(rc in want));
      out.waiting.push(`${ref.name} (${ref.uuid}): inventory of ${kept.map(([rc]) => rc).join(", ")} is allocated; kept with reserved = total until released`);
      const merged: Inventories = { ...want, ...Object.fromEntries(kept.map(([rc, r]) => [rc, { ...r, reserved: r.total }])) };
      return this.client.putInventories(ref, gen, merged, signal);
    }
  }

  private async removeProvider(host: string, p: ProviderRecord, out: HostSyncResult, signal?: AbortSignal): Promise<void> {
    const ref: ProviderRef = { uuid: p.uuid, name: p.name };
    try {
      if (this.dryRun) {
        const usages = await this.client.request<{ usages: Record<string, number> }>("GET", `/resource_providers/${p.uuid}/usages`, { provider: ref, signal });
        if (Object.values(usages.body.usages).some((n) => n > 0)) throw new DryRunInUse();
        out.changes.push({ action: "delete", host, ...ref, detail: "no longer reported" });
        return;
      }
      if (await this.client.deleteProvider(ref, signal)) out.changes.push({ action: "delete", host, ...ref, detail: "no longer reported" });
      this.known.delete(p.uuid);
    } catch (err) {
      if (!(err instanceof DryRunInUse || isConflict(err, PLACEMENT_CODES.providerInUse))) throw err;
      out.waiting.push(`${ref.name} (${ref.uuid}) is gone but has allocations: kept with reserved = total until they are released`);
      out.kept.push(ref);
      const before = out.changes.length;
      await this.converge(host, ref, p.generation, { inventories: reserveAll, traits: null }, out, signal);
      for (const c of out.changes.slice(before)) if (c.action === "set-inventory") c.action = "keep-in-use";
    }
  }

  private async current(ref: ProviderRef, generation: number | null, signal?: AbortSignal): Promise<Known> {
    const known = this.known.get(ref.uuid);
    if (known && generation !== null && known.generation === generation) return known;
    for (;;) {
      const [inv, traits] = await Promise.all([this.client.getInventories(ref, signal), this.client.getTraits(ref, signal)]);
      // Two reads: if something wrote in between, read both again.
      if (inv.generation !== traits.generation) continue;
      const cur = { generation: inv.generation, inventories: inv.inventories, traits: traits.traits };
      this.remember(ref.uuid, cur);
      return cur;
    }
  }

  private remember(uuid: string, k: Known, written = true): void {
    if (!written) return;
    if (this.known.size >= MAX_KNOWN && !this.known.has(uuid)) this.known.clear();
    this.known.set(uuid, k);
  }
}

class DryRunInUse extends Error {}

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
