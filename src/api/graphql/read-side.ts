/**
 * What the GraphQL layer reads. The composition root adapts the projections' ReadModels to it,
 * so resolvers do not depend on key layouts or on which store holds the read models.
 */
import type { Page } from "./types/connection.js";

export type Doc = Record<string, unknown> & { uuid: string };
export interface DeviceFilterArgs { type?: string; vendor?: string; hostname?: string; status?: string }
export interface DeployableFilterArgs { hostname?: string; rpUuid?: string; deviceUuid?: string; name?: string }
export interface ArqFilterArgs {
  instanceUuid?: string;
  state?: string;
  hostname?: string;
  deviceProfileName?: string;
  resolvedOnly?: boolean;
  /** Set by the resolver from the caller's token, never by the client. */
  projectId?: string;
}

export interface ReadSide {
  getDevices(uuids: readonly string[]): Promise<(Doc | null)[]>;
  listDevices(filter: DeviceFilterArgs, first: number, after?: string): Promise<Page<Doc>>;
  getDeployables(uuids: readonly string[]): Promise<(Doc | null)[]>;
  deployablesByDevice(deviceUuids: readonly string[]): Promise<Doc[][]>;
  childrenOf(deployableUuids: readonly string[]): Promise<Doc[][]>;
  handlesByDeployable(deployableUuids: readonly string[]): Promise<Doc[][]>;
  listDeployables(filter: DeployableFilterArgs, first: number, after?: string): Promise<Page<Doc>>;
  getArqs(uuids: readonly string[]): Promise<(Doc | null)[]>;
  listArqs(filter: ArqFilterArgs, first: number, after?: string): Promise<Page<Doc>>;
  listProfiles(names?: readonly string[]): Promise<Doc[]>;
  getProfileByName(name: string): Promise<Doc | null>;
  getProfileByUuid(uuid: string): Promise<Doc | null>;
  listResourceProviders(hostname?: string): Promise<Doc[]>;
}
