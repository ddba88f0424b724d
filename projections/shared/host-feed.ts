/**
 * A view of every host, kept across reads by one process: read whole once, then, before each use,
 * only the hosts the inventory models marked as changed at or after the position the view was last
 * read at (changed-hosts.ts) are read again and put into the view, or removed from it. The
 * placement engine's candidates (src/api/kept-candidates.ts) and the fleet the metrics show
 * (fleetFeed in projections/resource-providers/queries.ts) are two such views.
 *
 * A view may come from several models with their own checkpoints; it counts as read up to the
 * lowest of them, so a change one model showed before another is read again once all show it. A
 * model rebuilt from another log (its checkpoint behind what was read) is read whole again.
 *
 * Hosts are read a few at a time, and the reading gives the event loop a turn whenever it has held
 * it for a few milliseconds: a fleet of thousands of hosts is read whole without holding requests
 * up. A feed whose reads can wait (the metrics' fleet: a scrape is not in a hurry) is given a
 * pacing instead, which pauses between reads to leave most of the thread to requests. A view read
 * whole is built apart and takes the old one's place at the end; hosts read again are put into the
 * view together once all of them are read.
 */
import type { Pacing } from "../../src/infra/duty-cycle.js";
import { EventLoopTurns } from "../../src/infra/event-loop-turns.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";

/** What a host-feed keeps: hosts put (added, or replacing what was known) and removed by name. */
export interface HostView<H> {
  put(host: H): void;
  remove(hostname: string): void;
}

export type HostFeedSource<H extends { hostname: string }, V extends HostView<H>> = {
  /** The read models the view comes from. */
  models: readonly string[];
  /** Per model: the hosts it marked at or after a position (every host it has when undefined). */
  changedSince: ReadonlyArray<(store: ReadStore, position: bigint | undefined) => Promise<string[]>>;
  /** The named hosts as the models show them now; a host left out has nothing there (it is removed). */
  read: (store: ReadStore, hostnames: readonly string[]) => Promise<readonly H[]>;
  /** An empty view. */
  empty: () => V;
};

/** Hosts read in one go. */
const SLICE = 4;

export class HostFeed<H extends { hostname: string }, V extends HostView<H>> {
  private view: V;
  /** The position the view was read up to: null before the first read, undefined while the models had none. */
  private readUpTo: bigint | undefined | null = null;
  private tail: Promise<void> = Promise.resolve();
  /** A read not yet started, which callers arriving now join. */
  private next: Promise<void> | null = null;

  /** `pacing`: a new one for each read, asked between slices of hosts; a turn every few milliseconds without. */
  constructor(
    private readonly store: ReadStore,
    private readonly source: HostFeedSource<H, V>,
    private readonly pacing: () => Pacing = () => new EventLoopTurns(),
  ) {
    this.view = source.empty();
  }

  /** The view as the read models show it now. */
  async current(): Promise<V> {
    let read = this.next;
    if (read === null) {
      const started: Promise<void> = this.tail.then(() => {
        if (this.next === started) this.next = null;
        return this.refresh();
      });
      read = this.next = started;
      this.tail = started.catch(() => undefined);
    }
    await read;
    return this.view;
  }

  private async refresh(): Promise<void> {
    const { store, source } = this;
    const checkpoints = await store.getCheckpoints(source.models);
    const upTo = checkpoints.some((c) => c === undefined) ? undefined : checkpoints.reduce((a, b) => (a! < b! ? a : b));
    const behind = this.readUpTo !== null && this.readUpTo !== undefined && (upTo === undefined || upTo < this.readUpTo);
    const whole = this.readUpTo === null || behind;
    const since = whole ? undefined : (this.readUpTo as bigint | undefined);
    const names = [...new Set((await Promise.all(source.changedSince.map((changed) => changed(store, since)))).flat())];
    if (whole) {
      const view = source.empty();
      await readSliced(store, source, names, this.pacing(), (host) => view.put(host));
      this.view = view;
    } else if (names.length > 0) {
      const read = new Map<string, H>();
      await readSliced(store, source, names, this.pacing(), (host) => read.set(host.hostname, host));
      for (const name of names) {
        const host = read.get(name);
        if (host) this.view.put(host);
        else this.view.remove(name);
      }
    }
    this.readUpTo = upTo;
  }
}

/** Reads the named hosts a slice at a time, asking `pace` between slices. */
async function readSliced<H extends { hostname: string }>(store: ReadStore, source: HostFeedSource<H, HostView<H>>, names: readonly string[], pace: Pacing, take: (host: H) => void): Promise<void> {
  for (let i = 0; i < names.length; i += SLICE) {
    for (const host of await source.read(store, names.slice(i, i + SLICE))) take(host);
    await pace.pause();
  }
}
