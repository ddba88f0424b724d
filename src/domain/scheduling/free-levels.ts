/**
 * Free handles of one resource class per host, grouped by how many: the hosts with the most free
 * handles of a class are found without looking at the others. Kept up to date host by host.
 */
export class FreeLevels {
  /** Free handles of the class on each host offering it (0 included). */
  readonly byHost = new Map<string, number>();
  private readonly levels = new Map<number, Set<string>>();
  /** The levels held, largest first; null until asked for after a level came or went. */
  private sorted: number[] | null = [];

  set(hostname: string, free: number): void {
    const before = this.byHost.get(hostname);
    if (before === free) return;
    if (before !== undefined) this.leave(hostname, before);
    this.byHost.set(hostname, free);
    let at = this.levels.get(free);
    if (!at) {
      this.levels.set(free, (at = new Set()));
      this.sorted = null;
    }
    at.add(hostname);
  }

  delete(hostname: string): void {
    const before = this.byHost.get(hostname);
    if (before === undefined) return;
    this.byHost.delete(hostname);
    this.leave(hostname, before);
  }

  get size(): number {
    return this.byHost.size;
  }

  /** The levels held, largest first. */
  descending(): readonly number[] {
    this.sorted ??= [...this.levels.keys()].sort((a, b) => b - a);
    return this.sorted;
  }

  hostsAt(level: number): ReadonlySet<string> {
    return this.levels.get(level) ?? EMPTY;
  }

  private leave(hostname: string, level: number): void {
    const at = this.levels.get(level)!;
    at.delete(hostname);
    if (at.size === 0) {
      this.levels.delete(level);
      this.sorted = null;
    }
  }
}

const EMPTY: ReadonlySet<string> = new Set();
