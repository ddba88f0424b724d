import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import type { MemoryEventStore } from "../../src/infra/eventstore/memory.js";

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
