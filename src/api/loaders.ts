import DataLoader from "dataloader";
import { getArqs } from "../../projections/arqs/queries.js";
import { lastProgrammingOf, programmingOf, type LastProgrammingView, type ProgrammingView } from "../../projections/deployables/queries.js";
import * as tree from "../../projections/device-tree/queries.js";
import type { ArqView } from "../domain/arqs/view.js";
import type { ReadStore } from "../infra/readstore/port.js";

const batch = <V>(fn: (keys: readonly string[]) => Promise<V[]>) => new DataLoader<string, V>(fn, { maxBatchSize: 1000 });

/**
 * Per-request DataLoaders over the read models' batch queries: nested fields of a page of results
 * cost one read-store round trip per field, not one per parent. Each is made on first use: every
 * request and subscription has a context, and most use one loader or none.
 */
export class Loaders {
  private _device?: DataLoader<string, tree.DeviceView | null>;
  private _deployable?: DataLoader<string, tree.DeployableView | null>;
  private _deployablesOfDevice?: DataLoader<string, tree.DeployableView[]>;
  private _childrenOfDeployable?: DataLoader<string, tree.DeployableView[]>;
  private _handlesOfDeployable?: DataLoader<string, tree.AttachHandleView[]>;
  private _arq?: DataLoader<string, ArqView | null>;
  private _programming?: DataLoader<string, ProgrammingView | null>;
  private _lastProgramming?: DataLoader<string, LastProgrammingView | null>;
  constructor(private readonly store: ReadStore) {}

  get device() {
    return (this._device ??= batch((k) => tree.getDevices(this.store, k)));
  }
  get deployable() {
    return (this._deployable ??= batch((k) => tree.getDeployables(this.store, k)));
  }
  get deployablesOfDevice() {
    return (this._deployablesOfDevice ??= batch((k) => tree.deployablesByDevice(this.store, k)));
  }
  get childrenOfDeployable() {
    return (this._childrenOfDeployable ??= batch((k) => tree.childrenOf(this.store, k)));
  }
  get handlesOfDeployable() {
    return (this._handlesOfDeployable ??= batch((k) => tree.handlesByDeployable(this.store, k)));
  }
  get arq() {
    return (this._arq ??= batch((k) => getArqs(this.store, k)));
  }
  get programming() {
    return (this._programming ??= batch((k) => programmingOf(this.store, k)));
  }
  get lastProgramming() {
    return (this._lastProgramming ??= batch((k) => lastProgrammingOf(this.store, k)));
  }
}
