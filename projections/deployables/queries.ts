/** The deployables read model's queries: by uuid, and filtered lists (by host, resource provider, device, name, bitstream). */
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { readDeployables, type DeployableView } from "../shared/deployables.js";
import { filterIndexes, pageOf, type Page } from "../shared/page.js";
import { FAMILIES, k } from "./projection.js";

export interface DeployableFilter {
  hostname?: string | null;
  rpUuid?: string | null;
  deviceUuid?: string | null;
  name?: string | null;
  /** The bitstream the deployable runs. */
  bitstreamId?: string | null;
}

export function getDeployables(store: ReadStore, uuids: readonly string[]): Promise<Array<DeployableView | null>> {
  return readDeployables(store, k, uuids);
}

export async function listDeployables(store: ReadStore, filter: DeployableFilter, first: number, after?: string): Promise<Page<DeployableView>> {
  const index = filterIndexes(k, FAMILIES, filter, ["rpUuid", "name", "deviceUuid", "bitstreamId", "hostname"], "all");
  return pageOf(store, index, first, after, (u) => getDeployables(store, u));
}

/** A region's programming request in flight (see projection.ts), or null. */
export interface ProgrammingView {
  requestId: string;
  bitstreamId: string;
  bitstreamName: string;
  checksum: string;
  functionId: string | null;
  requestedBy: { kind: "bind"; arqUuid: string; instanceUuid: string } | { kind: "operator"; principal: string };
  requestedAt: string;
}

/** How a region's last programming request ended, or null. */
export interface LastProgrammingView {
  requestId: string;
  bitstreamId: string;
  outcome: "PROGRAMMED" | "FAILED" | "ABANDONED";
  reason: string | null;
  command: string[] | null;
  durationMs: number | null;
  late: boolean;
  at: string;
}

export async function programmingOf(store: ReadStore, deployableUuids: readonly string[]): Promise<Array<ProgrammingView | null>> {
  return (await store.getDocs(deployableUuids.map((u) => k("programming", u)))) as Array<ProgrammingView | null>;
}

export async function lastProgrammingOf(store: ReadStore, deployableUuids: readonly string[]): Promise<Array<LastProgrammingView | null>> {
  return (await store.getDocs(deployableUuids.map((u) => k("last-programming", u)))) as Array<LastProgrammingView | null>;
}

/** The deployables running a bitstream, and those being programmed with it. */
export async function deployablesUsingBitstream(store: ReadStore, bitstreamId: string): Promise<{ running: DeployableView[]; programming: DeployableView[] }> {
  const [running, programming] = await store.getMembers([k(`${FAMILIES.bitstreamId}:${bitstreamId}`), k(`by-programming:${bitstreamId}`)]);
  const [r, p] = await Promise.all([getDeployables(store, running!), getDeployables(store, programming!)]);
  const present = (list: Array<DeployableView | null>) => list.filter((d): d is DeployableView => d !== null);
  return { running: present(r), programming: present(p) };
}
