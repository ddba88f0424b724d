import type { RecordedEvent } from "../../src/eventstore/port.js";
import type { MemoryEventStore } from "../../src/eventstore/memory.js";
import type { Write } from "../../src/readstore/port.js";
import { MemoryReadStore } from "../../src/readstore/memory.js";

/** `inner` seen through an adapter that leaves gaps: its positions multiplied by `factor`. */
export function gappyLog(inner: MemoryEventStore, factor: bigint): MemoryEventStore {
  const gappy = Object.create(inner) as MemoryEventStore;
  const scale = (e: RecordedEvent): RecordedEvent => ({ ...e, position: e.position * factor });
  const unscale = (after: bigint | undefined) => (after === undefined ? undefined : after / factor);
  gappy.readAll = async (o = {}) => (await inner.readAll({ ...o, after: unscale(o.after) })).map(scale);
  gappy.headPosition = async () => ((await inner.headPosition()) ?? 0n) * factor;
  gappy.subscribeToAll = (o = {}) => {
    const sub = inner.subscribeToAll({ ...o, after: unscale(o.after) });
    return {
      async *[Symbol.asyncIterator]() {
        for await (const e of sub) yield scale(e);
      },
      close: () => sub.close(),
    };
  };
  return gappy;
}

/**
 * A memory read store whose writes chosen by `holds` wait while it is closed (it starts closed);
 * `held` resolves when one such write is waiting, so a test reads the projector's status while it
 * is behind, at a known point.
 */
export class HeldWrites {
  readonly store = new MemoryReadStore();
  held!: Promise<void>;
  private opened!: Promise<void>;
  private release!: () => void;
  private notify!: () => void;

  constructor(holds: (projection: string, writes: readonly Write[]) => boolean) {
    this.close();
    const apply = this.store.applyBatch.bind(this.store);
    this.store.applyBatch = async (projection, writes, checkpoint, expected) => {
      if (holds(projection, writes)) {
        this.notify();
        await this.opened;
      }
      return apply(projection, writes, checkpoint, expected);
    };
  }

  close(): void {
    this.opened = new Promise((resolve) => (this.release = resolve));
    this.held = new Promise((resolve) => (this.notify = resolve));
  }

  open(): void {
    this.release();
  }
}
