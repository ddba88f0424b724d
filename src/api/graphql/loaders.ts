import DataLoader from "dataloader";
import type { Doc, ReadSide } from "./read-side.js";

const batch = <V>(fn: (keys: readonly string[]) => Promise<V[]>) => new DataLoader<string, V>(fn, { maxBatchSize: 1000 });

/**
 * Per-request DataLoaders: nested fields of a page of results cost one read-store round trip per
 * field, not one per parent. Each is made on first use: every request and subscription has a
 * context, and most use one loader or none.
 */
export class Loaders {
  private _device?: DataLoader<string, Doc | null>;
  private _deployable?: DataLoader<string, Doc | null>;
  private _deployablesOfDevice?: DataLoader<string, Doc[]>;
  private _childrenOfDeployable?: DataLoader<string, Doc[]>;
  private _handlesOfDeployable?: DataLoader<string, Doc[]>;
  private _arq?: DataLoader<string, Doc | null>;
  constructor(private readonly read: ReadSide) {}

  get device() {
    return (this._device ??= batch((k) => this.read.getDevices(k)));
  }
  get deployable() {
    return (this._deployable ??= batch((k) => this.read.getDeployables(k)));
  }
  get deployablesOfDevice() {
    return (this._deployablesOfDevice ??= batch((k) => this.read.deployablesByDevice(k)));
  }
  get childrenOfDeployable() {
    return (this._childrenOfDeployable ??= batch((k) => this.read.childrenOf(k)));
  }
  get handlesOfDeployable() {
    return (this._handlesOfDeployable ??= batch((k) => this.read.handlesByDeployable(k)));
  }
  get arq() {
    return (this._arq ??= batch((k) => this.read.getArqs(k)));
  }
}

export const createLoaders = (read: ReadSide): Loaders => new Loaders(read);
