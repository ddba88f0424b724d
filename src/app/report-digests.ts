/**
 * Per host, the digest of a report known to diff to nothing, with the host's inventoryChanges
 * count when that was checked. While the count is the same (only allocations and releases since),
 * a report with that digest would still write nothing, so confirmHostInventory can answer
 * "unchanged" without the report. In-process and bounded: a miss only costs the agent a full report.
 */
export interface SettledReport {
  digest: string;
  /** HostState.inventoryChanges of the state the report diffed to nothing against. */
  inventoryChanges: number;
  /** The `unchanged` count a full report answers (reported devices the host knows). */
  unchanged: number;
}

export class ReportDigests {
  private readonly entries = new Map<string, SettledReport>();

  constructor(private readonly max = 200_000) {}

  get(hostname: string): SettledReport | undefined {
    const hit = this.entries.get(hostname);
    if (hit) {
      // Least recently used goes first: a host that keeps confirming keeps its entry.
      this.entries.delete(hostname);
      this.entries.set(hostname, hit);
    }
    return hit;
  }

  set(hostname: string, entry: SettledReport): void {
    this.entries.delete(hostname);
    this.entries.set(hostname, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(hostname: string): void {
    this.entries.delete(hostname);
  }

  get size(): number {
    return this.entries.size;
  }
}
