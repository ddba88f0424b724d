/** What a sync of one host did to Placement (or, in a dry run, would do), and what holds it back. */
import type { ProviderRef } from "./errors.js";

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

export const noChanges = (host: string): HostSyncResult => ({ host, changes: [], waiting: [], kept: [] });
