/**
 * Every query of every read model, over one ReadStore. The GraphQL layer wraps the batch
 * functions (arrays in, arrays out, same order) in DataLoaders: each is one round trip for the
 * whole batch (two where an index leads to docs). Lists take `first` (the caller caps it) and an
 * opaque `after` cursor taken from a previous page of the same list.
 */
import * as arqs from "../../projections/arqs.js";
import * as deployables from "../../projections/deployables.js";
import * as deviceProfiles from "../../projections/device-profiles.js";
import * as deviceTree from "../../projections/device-tree.js";
import * as resourceProviders from "../../projections/resource-providers.js";
import type { Page } from "../../projections/shared/page.js";
import type { ReadStore } from "./port.js";

export type { Page };
export type { ArqFilter, ArqView } from "../../projections/arqs.js";
export type { DeployableFilter } from "../../projections/deployables.js";
export type { DeviceProfileView } from "../../projections/device-profiles.js";
export type { AttachHandleView, DeployableView, DeviceFilter, DeviceView } from "../../projections/device-tree.js";
export type { ResourceProviderView } from "../../projections/resource-providers.js";

export class ReadModels {
  constructor(readonly store: ReadStore) {}

  // device-tree
  getDevices(uuids: readonly string[]) {
    return deviceTree.getDevices(this.store, uuids);
  }
  listDevices(filter: deviceTree.DeviceFilter, first: number, after?: string) {
    return deviceTree.listDevices(this.store, filter, first, after);
  }
  getDeployables(uuids: readonly string[]) {
    return deviceTree.getDeployables(this.store, uuids);
  }
  deployablesByDevice(deviceUuids: readonly string[]) {
    return deviceTree.deployablesByDevice(this.store, deviceUuids);
  }
  childrenOf(deployableUuids: readonly string[]) {
    return deviceTree.childrenOf(this.store, deployableUuids);
  }
  handlesByDeployable(deployableUuids: readonly string[]) {
    return deviceTree.handlesByDeployable(this.store, deployableUuids);
  }
  getHandles(uuids: readonly string[]) {
    return deviceTree.getHandles(this.store, uuids);
  }

  // deployables
  listDeployables(filter: deployables.DeployableFilter, first: number, after?: string) {
    return deployables.listDeployables(this.store, filter, first, after);
  }
  deployablesByRp(rpUuids: readonly string[]) {
    return deployables.deployablesByRp(this.store, rpUuids);
  }
  deployablesByHost(hostnames: readonly string[]) {
    return deployables.deployablesByHost(this.store, hostnames);
  }

  // arqs
  getArqs(uuids: readonly string[]) {
    return arqs.getArqs(this.store, uuids);
  }
  listArqs(filter: arqs.ArqFilter, first: number, after?: string) {
    return arqs.listArqs(this.store, filter, first, after);
  }

  // device-profiles
  listProfiles(names?: readonly string[]) {
    return deviceProfiles.listProfiles(this.store, names);
  }
  getProfileByName(name: string) {
    return deviceProfiles.getProfileByName(this.store, name);
  }
  getProfilesByName(names: readonly string[]) {
    return deviceProfiles.getProfilesByName(this.store, names);
  }
  getProfileByUuid(uuid: string) {
    return deviceProfiles.getProfileByUuid(this.store, uuid);
  }

  // resource-providers
  listResourceProviders(hostname?: string | null) {
    return resourceProviders.listResourceProviders(this.store, hostname);
  }
}
