import { LRUCache } from "lru-cache";

/**
 * Per host, the digest of a report known to diff to nothing, with the host's inventoryChanges
 * count when that was checked. While the count is the same (only allocations and releases since),
 * a report with that digest would still write nothing, so confirmHostInventory can answer
 * "unchanged" without the report. In-process and bounded: on a miss the host stream's last
 * HostReportSettled answers (domain/inventory/events.ts), so a restart or another replica does not
 * make every agent send its whole report again.
 */
export interface SettledReport {
  digest: string;
  /** HostState.inventoryChanges of the state the report diffed to nothing against. */
  inventoryChanges: number;
  /** The `unchanged` count a full report answers (reported devices the host knows). */
  unchanged: number;
}

/** Least recently used goes first: a host that keeps confirming keeps its entry. */
export class ReportDigests extends LRUCache<string, SettledReport> {
  constructor(max = 200_000) {
    super({ max });
  }
}
