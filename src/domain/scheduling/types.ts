/**
 * What the placement engine reads and answers. The read side hands it the candidates (each host's
 * providers with their device's taints, lifecycle state and topology); the engine is pure.
 */
import type { DeviceTopology } from "../inventory/topology-report.js";
import type { MatchAttribute, Need } from "../shared/placement-keys.js";
import type { TaintEffect, Toleration } from "../shared/tolerations.js";
import type { FreeLevels } from "./free-levels.js";

/** A request's shape: per group, the resource classes its alternatives may use (request-shape.ts). */
export type RequestShape = readonly (readonly string[])[];

export type { Need, MatchAttribute };

/** One profile group as the engine reads it: its alternatives in order of preference (the group's own keys first). */
export interface GroupRequest {
  alternatives: readonly Need[];
  tolerations: readonly Toleration[];
  /** Topology attributes this group's device shares with every other group naming the same attribute. */
  match: readonly MatchAttribute[];
  /** What a provider already running it needs no programming for (the weigher's "ready"). */
  functionId: string | null;
  bitstreamId: string | null;
  byName: boolean;
}

export interface PlacementRequest {
  groups: readonly GroupRequest[];
  /** False for a profile that may not be used (a disabled profile): every host is refused. */
  enabled: boolean;
}

/** A resource provider (a deployable offering a class) on a candidate host. */
export interface CandidateProvider {
  rpUuid: string;
  deviceUuid: string;
  resourceClass: string;
  traits: ReadonlySet<string>;
  /** Attach handles free now (total less reserved and used). */
  free: number;
  /** The device's taints. */
  taints: readonly { key: string; value: string; effect: TaintEffect }[];
  /** The device's lifecycle state (device-lifecycle.ts); FAILED, CLEANING, QUALIFYING and LOST (gone from its report) take nothing new. */
  lifecycle: string;
  topology: DeviceTopology | null;
  bitstreamId?: string | null;
  /** Free amount of each of the device's capacities this provider carries (a NIC port's bandwidth), by resource class. */
  capacityFree?: ReadonlyMap<string, number>;
}

export interface CandidateHost {
  hostname: string;
  /** The host's agent has not reported in time: nothing new is placed there. */
  stale: boolean;
  providers: readonly CandidateProvider[];
}

/** Where the request may go: only these hosts (null: any), or only the instance's host. */
export interface PlacementLimits {
  hosts?: readonly string[] | null;
  instanceHost?: string | null;
  /**
   * Whether a host's agent has stopped reporting, asked of the hosts the engine reaches (beside
   * `CandidateHost.stale`): liveness changes with time, so an index kept across decisions asks it.
   */
  stale?: (hostname: string) => boolean;
  /**
   * A stable key of the request (its instance's uuid): among hosts the weigher ranks equal, and
   * providers equal on a host, a hash of it decides instead of the names (spread.ts), so equal
   * requests placed at once spread over the devices rather than all racing for the first.
   */
  spread?: string | null;
}

/** The candidates as the engine reads them: hosts by name (sorted) and by the resource classes their providers offer. */
export interface CandidateIndex {
  readonly hosts: readonly CandidateHost[];
  readonly byName: ReadonlyMap<string, CandidateHost>;
  readonly byClass: ReadonlyMap<string, readonly CandidateHost[]>;
  /** The hosts' free handles of a class by level (an index kept across decisions has them): decisions without a host limit start from the hosts with the most. */
  freeOf?(resourceClass: string): FreeLevels | undefined;
  /**
   * Every host's bound for requests of this shape, by level (an index kept across decisions has
   * them): decisions without a host limit read hosts in bound order. `openOnly`: counting only
   * providers open to a request that tolerates nothing (request-shape.ts).
   */
  boundsOf?(shape: RequestShape, openOnly?: boolean): FreeLevels | undefined;
}

/** The rules, in the order they are checked: a refusal names the first that ruled a host or provider out. */
export const RULES = [
  "PROFILE_DISABLED",
  "HOST_LIMIT",
  "STALE_AGENT",
  "RESOURCE_CLASS",
  "TRAIT_MISSING",
  "TRAIT_FORBIDDEN",
  "LIFECYCLE",
  "TAINT",
  "NO_FREE_HANDLE",
  "CAPACITY",
  "TOPOLOGY",
] as const;
export type Rule = (typeof RULES)[number];

/** Why something was ruled out, and what would have to change for it to fit. */
export interface RuledOut {
  rule: Rule;
  message: string;
  change: string;
}

export interface Assignment {
  group: number;
  /** Which of the group's alternatives it got (0: the group's own keys). */
  alternative: number;
  rpUuid: string;
  deviceUuid: string;
  resourceClass: string;
  amount: number;
}

/** A choice on one host: every group assigned. */
export interface HostChoice {
  hostname: string;
  assignments: Assignment[];
  /** Free handles on matching providers summed over groups, and those needing no programming (the weigher's numbers). */
  free: number;
  ready: number;
}
