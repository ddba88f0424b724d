/**
 * The serving marks in the read store follow what readers may trust (ReadStore.markServing): a
 * model caught up with the head and not being rebuilt gets its mark, if the store still holds it
 * where the projector left it; a model whose store went back to an older checkpoint (a restored
 * snapshot, a failover to a replica that lagged) loses it until it has caught up again. A model
 * that is dropped (rebuilt, or lost with the store's data) loses it with its keys.
 */
import type { ReadStore } from "../../infra/readstore/port.js";
import type { Slot, Slots } from "./slots.js";

export class ServingMarks {
  private readonly demoted = new Set<Slot>();

  constructor(
    private readonly store: ReadStore,
    private readonly slots: Slots,
    /** The store did not hold a model where the projector thought: look at every model now. */
    private readonly changedUnderUs: () => void,
  ) {}

  demote(s: Slot): void {
    this.demoted.add(s);
  }

  async update(head: bigint | undefined): Promise<void> {
    for (const s of this.demoted) {
      this.demoted.delete(s);
      s.serving = false;
      await this.store.unmarkServing(s.projection.name);
    }
    for (const s of this.slots.all) {
      if (s.serving || s.failed || s.rebuilding) continue;
      if (head !== undefined && (s.processed === undefined || s.processed < head)) continue;
      if (await this.store.markServing(s.projection.name, s.stored ?? null)) s.serving = true;
      else this.changedUnderUs();
    }
  }
}
