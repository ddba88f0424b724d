/**
 * One writer per stream in this process: commands on the same stream wait for each other instead
 * of racing to a revision conflict (under load, many binds and releases on one host would retry
 * until they gave up). Writers in other processes still meet the expected-revision check.
 *
 * Locks are taken in name order, all at once or nested in increasing order, so two holders never
 * wait for each other; a holder must not ask again for a lock it holds.
 */
export class StreamLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(streams: readonly string[], fn: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    try {
      for (const s of [...new Set(streams)].sort()) releases.push(await this.acquire(s));
      return await fn();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  private async acquire(stream: string): Promise<() => void> {
    const before = this.tails.get(stream);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tail = before ? before.then(() => held) : held;
    this.tails.set(stream, tail);
    await before;
    return () => {
      release();
      if (this.tails.get(stream) === tail) this.tails.delete(stream);
    };
  }
}
