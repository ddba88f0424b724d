/**
 * What the syncer last wrote to (or read of) each provider, with the generation it holds: an
 * unchanged provider then costs no read beyond the tree listing (provider-sync.ts).
 */
import type { Inventories } from "./client.js";

export interface Known {
  generation: number;
  inventories: Inventories;
  traits: string[];
}

const MAX_KNOWN = 200_000;

export class KnownProviders {
  private readonly known = new Map<string, Known>();

  get(uuid: string): Known | undefined {
    return this.known.get(uuid);
  }

  /** The generation last seen of the provider (null: none). */
  generationOf(uuid: string): number | null {
    return this.known.get(uuid)?.generation ?? null;
  }

  /** Records `k` (unless nothing was `written`: a dry run); past MAX_KNOWN providers it starts afresh. */
  remember(uuid: string, k: Known, written = true): void {
    if (!written) return;
    if (this.known.size >= MAX_KNOWN && !this.known.has(uuid)) this.known.clear();
    this.known.set(uuid, k);
  }

  forget(uuid: string): void {
    this.known.delete(uuid);
  }
}
