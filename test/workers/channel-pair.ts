import type { Channel, ClusterMessage } from "../../src/infra/cluster/messages.js";

/**
 * Two ends of an in-memory channel standing in for node:cluster's IPC: messages are
 * structured-cloned as the advanced serialization does and arrive on a later turn; the third item
 * closes both ends.
 */
export function channelPair(): [Channel, Channel, () => void] {
  const listeners: [Set<(m: ClusterMessage) => void>, Set<(m: ClusterMessage) => void>] = [new Set(), new Set()];
  const closers: Array<() => void> = [];
  const end = (mine: 0 | 1): Channel => ({
    send: (msg) => {
      const copy = structuredClone(msg);
      setImmediate(() => listeners[1 - mine]!.forEach((fn) => fn(copy)));
    },
    onMessage: (fn) => {
      listeners[mine]!.add(fn);
      return () => listeners[mine]!.delete(fn);
    },
    onClose: (fn) => closers.push(fn),
  });
  return [end(0), end(1), () => closers.forEach((c) => c())];
}
