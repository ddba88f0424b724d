/**
 * Makes one provider of a host's tree match what is desired (host-sync.ts does the host):
 * created, moved under the host's compute node, its inventory and traits written where they differ,
 * or removed once no longer wanted.
 *
 * - Generations: every write names the generation it was computed from; a 409
 *   placement.concurrent_update (Nova claimed meanwhile, say) means read again and recompute.
 *   What the syncer last wrote is remembered per provider with its generation (known-providers.ts).
 * - Never under a VM: a provider that is no longer wanted but holds allocations is kept with
 *   reserved = total (and an inventory class still in use is kept the same way); the host is
 *   reported as waiting, so the sync looks again later and deletes it once the allocations are gone.
 */
import pRetry from "p-retry";
import type { DesiredProvider } from "../../domain/inventory/resource-providers.js";
import type { HostSyncResult } from "./changes.js";
import type { Inventories, PlacementClient, ProviderRecord } from "./client.js";
import { isConflict, PLACEMENT_CODES, PlacementRefusedError, type ProviderRef } from "./errors.js";
import { desiredInventories, describeInventories, reserveAll, sameInventories, sameSet } from "./inventories.js";
import { KnownProviders, type Known } from "./known-providers.js";

export class ProviderSyncer {
  readonly known = new KnownProviders();

  constructor(
    private readonly client: PlacementClient,
    private readonly dryRun: boolean,
  ) {}

  /** A desired provider: `listed` as the tree listing showed it (null: not in the tree). */
  async sync(host: string, d: DesiredProvider, computeUuid: string, listed: ProviderRecord | null, out: HostSyncResult, signal?: AbortSignal): Promise<void> {
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
          this.known.remember(d.uuid, { generation: rec.generation, inventories: {}, traits: [] });
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
  async converge(
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
          this.known.remember(ref.uuid, { generation: gen, inventories, traits: cur.traits }, !this.dryRun);
        }
        const traits = want.traits === null ? cur.traits : [...want.traits];
        if (!sameSet(cur.traits, traits)) {
          const added = traits.filter((t) => !cur.traits.includes(t));
          const removed = cur.traits.filter((t) => !traits.includes(t));
          if (!this.dryRun) gen = await this.client.putTraits(ref, gen, traits, signal);
          out.changes.push({ action: "set-traits", host, ...ref, detail: [added.length ? `+${added.join(" +")}` : "", removed.length ? `-${removed.join(" -")}` : ""].filter(Boolean).join(" ") });
          this.known.remember(ref.uuid, { generation: gen, inventories: this.known.get(ref.uuid)?.inventories ?? inventories, traits }, !this.dryRun);
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
            this.known.forget(ref.uuid);
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

  /** A provider no longer wanted: deleted, or while allocated kept with reserved = total. */
  async remove(host: string, p: ProviderRecord, out: HostSyncResult, signal?: AbortSignal): Promise<void> {
    const ref: ProviderRef = { uuid: p.uuid, name: p.name };
    try {
      if (this.dryRun) {
        const usages = await this.client.request<{ usages: Record<string, number> }>("GET", `/resource_providers/${p.uuid}/usages`, { provider: ref, signal });
        if (Object.values(usages.body.usages).some((n) => n > 0)) throw new DryRunInUse();
        out.changes.push({ action: "delete", host, ...ref, detail: "no longer reported" });
        return;
      }
      if (await this.client.deleteProvider(ref, signal)) out.changes.push({ action: "delete", host, ...ref, detail: "no longer reported" });
      this.known.forget(p.uuid);
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
      this.known.remember(ref.uuid, cur);
      return cur;
    }
  }
}

class DryRunInUse extends Error {}
