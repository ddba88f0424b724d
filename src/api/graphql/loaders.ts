import DataLoader from "dataloader";
import type { Doc, ReadSide } from "./read-side.js";

/**
 * Per-request DataLoaders: nested fields of a page of results cost one read-store round trip per
 * field, not one per parent.
 */
export function createLoaders(read: ReadSide) {
  const batch = <V>(fn: (keys: readonly string[]) => Promise<V[]>) => new DataLoader<string, V>(fn, { maxBatchSize: 1000 });
  return {
    device: batch((k) => read.getDevices(k)),
    deployable: batch((k) => read.getDeployables(k)),
    deployablesOfDevice: batch<Doc[]>((k) => read.deployablesByDevice(k)),
    childrenOfDeployable: batch<Doc[]>((k) => read.childrenOf(k)),
    handlesOfDeployable: batch<Doc[]>((k) => read.handlesByDeployable(k)),
    arq: batch((k) => read.getArqs(k)),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
