/**
 * The application: command handlers over the EventStore port, used by the GraphQL layer and the
 * binder. Every method reads the streams it needs, decides with the pure deciders of src/domain,
 * and appends with expected revisions (see handle.ts). Use cases live in one file per context.
 */
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { Bitstream, BitstreamMetadata } from "../domain/bitstreams/bitstream.js";
import { ContentStore } from "../infra/bitstreams/content-store.js";
import type { BitstreamCatalogue } from "../infra/bitstreams/port.js";
import * as bitstreams from "./bitstreams/use-cases.js";
import { EmbeddedCatalogue } from "./bitstreams/embedded-catalogue.js";
import * as programming from "./programming.js";
import * as cleaning from "./cleaning.js";
import * as partitions from "./partitions.js";
import * as capacities from "./capacities.js";
import * as eviction from "./eviction.js";
import type { DeviceProfileInput } from "../domain/device-profiles/validation.js";
import type { DriverDevice } from "../domain/inventory/report.js";
import type { CommandContext, DeviceStatus } from "../domain/shared/types.js";
import type { EventStore } from "../infra/eventstore/port.js";
import { AggregateCache } from "./aggregate-cache.js";
import * as arqs from "./arqs/index.js";
import * as profiles from "./device-profiles.js";
import * as changes from "./device-profile-changes.js";
import type { ProfileMigrationResult, ProfileUpdate } from "./device-profile-changes.js";
import { idempotent, type IdempotentRequest, type IdempotentResult } from "./idempotency.js";
import * as instances from "./instances.js";
import type { InstanceOperationResult } from "./instances.js";
import * as inventory from "./inventory.js";
import * as taints from "./taints.js";
import * as quotas from "./quotas.js";
import { ReportDigests } from "./report-digests.js";
import { ReportTimes } from "./report-times.js";
import { cannotProgram, unavailableReason, validLivenessPolicy, type LivenessPolicy } from "../domain/inventory/liveness.js";
import { Streams } from "./streams.js";
import { DEFAULT_HEALTH_RULES, type HealthRule } from "../domain/inventory/health-rules.js";
import { checkBindingCount } from "./request-limits.js";
import type { ArqBinding } from "../domain/arqs/bind.js";
import type { ArqView } from "../domain/arqs/view.js";
import type { DeviceProfileView } from "../domain/device-profiles/view.js";
import type { BooksPolicy } from "../domain/inventory/books.js";
import type { HostStatusView, InventoryReportView } from "./inventory.js";

export interface ApplicationOptions {
  store: EventStore;
  /** Ids of new profiles and ARQs (events get crypto.randomUUID ids regardless). */
  newId?: () => string;
  /** Entries of the in-process aggregate cache (default 10 000). */
  cacheSize?: number;
  /** PARTITION_KEEP_IDLE (default false: a released partition is destroyed). */
  keepIdlePartitions?: boolean;
  /** HOST_PERIOD_EVENTS, HOST_PERIOD_DAYS: when a host stream's period closes with a summary (default: never). */
  hostBooks?: BooksPolicy;
  /** The per-project ARQ quota; none when not given. */
  quota?: arqs.ArqQuota;
  /** The binds one call may ask for (MAX_BINDINGS_PER_MUTATION); no limit when not given. */
  maxBindings?: number;
  /**
   * Where bitstreams live: a catalogue (Glance), or the embedded one with its content in
   * `contentDir` (default: a directory under the system's temporary directory).
   */
  bitstreams?: { catalogue?: BitstreamCatalogue; contentDir?: string; maxBytes?: number };
  /** The agents' reporting period and when a silent host is stale or gone (default: 60 s, 3 and 10 periods). */
  liveness?: LivenessPolicy;
  /** What reported health taints a device (HEALTH_RULES_FILE; DEFAULT_HEALTH_RULES when not given). */
  healthRules?: readonly HealthRule[];
}

export const DEFAULT_LIVENESS: LivenessPolicy = { intervalS: 60, staleAfter: 3, goneAfter: 10 };

export type { AllocateResult } from "./arqs/index.js";

/** What an application is made of: a command under an idempotency key runs on a copy that shares all but the streams, the ids and the catalogue. */
export interface ApplicationParts {
  streams: Streams;
  newId: () => string;
  reportDigests: ReportDigests;
  reportTimes: ReportTimes;
  quota: arqs.ArqQuota | undefined;
  maxBindings: number;
  catalogue: BitstreamCatalogue;
  healthRules: readonly HealthRule[];
}

export class Application {
  private readonly streams: Streams;
  private readonly newId: () => string;
  private readonly reportDigests: ReportDigests;
  /** When each host's agent last reported (shared with the other replicas by the composition root). */
  readonly reportTimes: ReportTimes;
  private readonly quota: arqs.ArqQuota | undefined;
  private readonly maxBindings: number;
  readonly catalogue: BitstreamCatalogue;
  private readonly healthRules: readonly HealthRule[];

  constructor(opts: ApplicationOptions | ApplicationParts) {
    const parts = "streams" in opts ? opts : partsOf(opts);
    this.streams = parts.streams;
    this.newId = parts.newId;
    this.reportDigests = parts.reportDigests;
    this.reportTimes = parts.reportTimes;
    this.quota = parts.quota;
    this.maxBindings = parts.maxBindings;
    this.catalogue = parts.catalogue;
    this.healthRules = parts.healthRules;
  }

  /**
   * Runs a command under an idempotency key (app/idempotency.ts): `run` gets this application with
   * ids derived from the key, and a context that says whether an earlier attempt may have written.
   */
  idempotent<T>(ctx: CommandContext, req: IdempotentRequest, run: (app: Application, ctx: CommandContext) => Promise<T>): Promise<IdempotentResult<T>> {
    return idempotent(this.streams, ctx, req, ({ streams, newId }, resuming) => run(this.keyed(streams, newId), { ...ctx, resuming }));
  }

  /** The same application (cache, locks, report digests, quota, catalogue), with the key's ids and streams (its claim before the first write). */
  private keyed(streams: Streams, newId: () => string): Application {
    const catalogue = this.catalogue instanceof EmbeddedCatalogue ? this.catalogue.keyed(streams, newId) : this.catalogue;
    return new Application({ streams, newId, reportDigests: this.reportDigests, reportTimes: this.reportTimes, quota: this.quota, maxBindings: this.maxBindings, catalogue, healthRules: this.healthRules });
  }

  /** Why a host's agent cannot program a region now (its reports stopped), or null: binds needing programming fail at once. */
  private readonly agentDown = (hostname: string): string | null => {
    const l = this.reportTimes.liveness(hostname);
    return cannotProgram(l) ? unavailableReason(hostname, l, this.reportTimes.policy) : null;
  };

  /** Why a host's agent is not to be given new work (its reports stopped), or null: the placement engine leaves such hosts out. */
  agentUnavailable(hostname: string): string | null {
    return this.agentDown(hostname);
  }

  createDeviceProfile(ctx: CommandContext, input: DeviceProfileInput): Promise<DeviceProfileView> {
    return profiles.createDeviceProfile(this.streams, this.newId, ctx, input);
  }

  /** The uuids deleted; nothing is deleted when any profile is missing (NOT_FOUND) or in use (CONFLICT). */
  deleteDeviceProfiles(ctx: CommandContext, sel: { names?: string[]; uuids?: string[] }): Promise<string[]> {
    return profiles.deleteDeviceProfiles(this.streams, ctx, sel);
  }

  /** A new version (description, groups); the same content again makes none. */
  updateDeviceProfile(ctx: CommandContext, input: ProfileUpdate): Promise<DeviceProfileView> {
    return changes.updateDeviceProfile(this.streams, ctx, input);
  }

  /** A disabled profile refuses new ARQs (PROFILE_DISABLED); its ARQs are untouched. */
  setDeviceProfileEnabled(ctx: CommandContext, name: string, enabled: boolean): Promise<DeviceProfileView> {
    return changes.setDeviceProfileEnabled(this.streams, ctx, name, enabled);
  }

  /** The profile under its new name: same uuid, versions, state and ARQs. */
  renameDeviceProfile(ctx: CommandContext, name: string, newName: string): Promise<DeviceProfileView> {
    return changes.renameDeviceProfile(this.streams, ctx, name, newName);
  }

  /** A mapping of renamed traits and resource classes over the profiles named; all or nothing; a dry run writes nothing. */
  migrateDeviceProfiles(ctx: CommandContext, names: readonly string[], mapping: unknown, dryRun: boolean): Promise<ProfileMigrationResult[]> {
    return changes.migrateDeviceProfiles(this.streams, ctx, names, mapping, dryRun);
  }

  getDeviceProfileFromLog(name: string): Promise<DeviceProfileView | null> {
    return profiles.getDeviceProfileFromLog(this.streams, name);
  }

  reportHostInventory(ctx: CommandContext, hostname: string, devices: DriverDevice[]): Promise<InventoryReportView> {
    return inventory.reportHostInventory(this.streams, this.reportDigests, ctx, hostname, devices, this.reportTimes, this.healthRules);
  }

  /** What reportHostInventory would answer for a report with this digest, if it would write nothing; else null. Writes nothing. */
  confirmHostInventory(hostname: string, digest: string, at = new Date().toISOString()): Promise<InventoryReportView | null> {
    return inventory.confirmHostInventory(this.streams, this.reportDigests, hostname, digest, { times: this.reportTimes, at });
  }

  hostStatus(hostname: string): Promise<HostStatusView> {
    return inventory.hostStatus(this.streams, this.reportDigests, this.reportTimes, hostname);
  }

  /** Cyborg's switch over the maintenance taint; `as` names the taint's author when it is not the caller (Cyborg's REST: "cyborg-rest"). */
  setDeviceStatus(ctx: CommandContext, hostname: string, deviceUuid: string, status: DeviceStatus, as?: { by: string; reason: string }): Promise<void> {
    return taints.setDeviceStatus(this.streams, ctx, hostname, deviceUuid, status, as);
  }

  taintDevice(ctx: CommandContext, hostname: string, deviceUuid: string, input: taints.TaintInput): Promise<void> {
    return taints.taintDevice(this.streams, ctx, hostname, deviceUuid, input);
  }

  untaintDevice(ctx: CommandContext, hostname: string, deviceUuid: string, input: taints.UntaintInput): Promise<void> {
    return taints.untaintDevice(this.streams, ctx, hostname, deviceUuid, input);
  }

  createArqs(ctx: CommandContext, input: { deviceProfileName: string; groupIndex?: number | null }): Promise<ArqView[]> {
    return arqs.createArqs(this.streams, this.newId, ctx, input, this.quota);
  }

  /** With `allocate`, ARQs whose handle is free are bound at once (one commit); the binder does the rest. */
  async startBinds(ctx: CommandContext, bindings: ArqBinding[], opts: { allocate?: boolean } = {}): Promise<ArqView[]> {
    checkBindingCount("bindings", bindings.length, this.maxBindings);
    return arqs.startBinds(this.streams, ctx, bindings, { ...opts, catalogue: this.catalogue, agentDown: this.agentDown });
  }

  /** Creates the ARQs and binds them to the instance on the providers given (os-acc's plug); a refused bind deletes them again. */
  createAndBindArqs(ctx: CommandContext, spec: arqs.PlugSpec, target: { instanceUuid: unknown; providers: unknown }, opts: { allocate?: boolean; takenRefuses?: boolean } = {}): Promise<ArqView[]> {
    return arqs.createAndBind(this.streams, this.newId, ctx, spec, target, { ...opts, catalogue: this.catalogue, quota: this.quota, maxBindings: this.maxBindings, agentDown: this.agentDown });
  }
  allocateForArq(ctx: CommandContext, arqUuid: string): Promise<arqs.AllocateResult> {
    return arqs.allocateForArq(this.streams, ctx, arqUuid, this.catalogue, this.agentDown);
  }

  /** `abandonProgramming` (a timeout): the request of the region the bind waits for is abandoned first. */
  failBind(ctx: CommandContext, arqUuid: string, reason: string, opts?: { fromBound?: boolean; abandonProgramming?: boolean }): Promise<boolean> {
    return arqs.failBind(this.streams, ctx, arqUuid, reason, opts);
  }

  uploadBitstream(ctx: CommandContext, input: Partial<Record<keyof BitstreamMetadata, unknown>>, content: Readable): Promise<Bitstream> {
    return bitstreams.uploadBitstream(this.catalogue, ctx, input, content);
  }

  /** Refused (CONFLICT) while `usedBy` names what uses it: gather it from the read models first. */
  deleteBitstream(ctx: CommandContext, id: string, usedBy: readonly string[]): Promise<void> {
    return bitstreams.deleteBitstream(this.catalogue, ctx, id, usedBy);
  }

  /** `forHost`: an agent's host, which must have a request in flight naming the bitstream; null for an admin. */
  bitstreamContent(id: string, forHost: string | null) {
    return bitstreams.bitstreamContent(this.streams, this.catalogue, id, forHost);
  }

  /** An operator's programming of a region (admin; refused while it has bound ARQs): the request in flight, or null if it already runs it. */
  programDeployable(ctx: CommandContext, target: { hostname: string; deployableUuid: string; bitstreamId: string }) {
    return programming.programDeployable(this.streams, this.catalogue, this.newId, ctx, target);
  }

  programmingInFlight(hostname: string): Promise<programming.ProgrammingRequestView[]> {
    return programming.programmingInFlight(this.streams, hostname);
  }

  /**
   * The agent's report. A success completes the binds waiting for it in the same plan (the report
   * first, then each bind), so they are BOUND as the report is answered, without the binder's turn.
   */
  async reportProgrammingResult(ctx: CommandContext, input: programming.ProgrammingResultInput): Promise<{ recorded: boolean; late: boolean }> {
    const waiting = input.ok ? await programming.bindsWaitingOnProgramming(this.streams, input) : [];
    if (waiting.length > 0) {
      const results = await arqs.allocateForArqs(this.streams, ctx, waiting, this.catalogue, this.agentDown, programming.programmingResultOf(input, ctx.at));
      if ([...results.values()].some((r) => !("notBinding" in r && r.notBinding))) return { recorded: true, late: false };
    }
    return programming.reportProgrammingResult(this.streams, ctx, input);
  }

  abandonProgramming(ctx: CommandContext, target: { hostname: string; deployableUuid: string; requestId: string; reason: string }): Promise<boolean> {
    return programming.abandonProgramming(this.streams, ctx, target);
  }

  /** Asks every holder of the device to move (a NoExecute taint): the notices given now. */
  requestEvictions(ctx: CommandContext, input: eviction.EvictionInput): Promise<eviction.EvictionNotice[]> {
    return eviction.requestEvictions(this.streams, ctx, input);
  }

  setDeviceCleaningRequired(ctx: CommandContext, hostname: string, deviceUuid: string, required: boolean): Promise<void> {
    return cleaning.setDeviceCleaningRequired(this.streams, ctx, hostname, deviceUuid, required);
  }

  /** An operator's clean of a device no ARQ holds (the repair of a FAILED one): the request in flight. */
  requestDeviceCleaning(ctx: CommandContext, hostname: string, deviceUuid: string, reason: string | null) {
    return cleaning.requestDeviceCleaning(this.streams, ctx, hostname, deviceUuid, reason);
  }

  /** The cleans the host's agent is to run. */
  cleaningInFlight(hostname: string): Promise<cleaning.CleaningRequestView[]> {
    return cleaning.cleaningInFlight(this.streams, hostname);
  }

  reportCleaningResult(ctx: CommandContext, input: cleaning.CleaningResultInput) {
    return cleaning.reportCleaningResult(this.streams, ctx, input);
  }

  /** A partitioned device's slices used and free, its profiles' room, its partitions; null for a device that is not cut. */
  devicePartitioning(hostname: string, deviceUuid: string): Promise<partitions.DevicePartitioningView | null> {
    return partitions.devicePartitioning(this.streams, hostname, deviceUuid);
  }

  /** The device's capacities (a NIC port's bandwidth): each amount, used and free, and who draws it; [] for a device that reports none. */
  deviceCapacities(hostname: string, deviceUuid: string): Promise<capacities.DeviceCapacityView[]> {
    return capacities.deviceCapacities(this.streams, hostname, deviceUuid);
  }

  /** The partitions the host's agent is asked to make or destroy now. */
  partitionRequestsInFlight(hostname: string): Promise<partitions.PartitionRequestView[]> {
    return partitions.partitionRequestsInFlight(this.streams, hostname);
  }

  /**
   * The agent's answer to a partition request. A made (or failed) partition's bind is decided in
   * the same append as the answer (BOUND, or BIND_FAILED with the agent's reason), so the instance
   * waiting on accelerator-request-bound is told after one commit; the binder's own run finds it
   * done. An answer no bind waits for is recorded alone.
   */
  async reportPartitionResult(ctx: CommandContext, input: partitions.PartitionResultInput): Promise<{ recorded: boolean }> {
    const arqUuid = await partitions.bindWaitingOn(this.streams, input.hostname, input.requestId);
    if (arqUuid) {
      const r = await arqs.allocateForArq(this.streams, ctx, arqUuid, this.catalogue, this.agentDown, partitions.answerOf(input, ctx.at));
      if (!("notBinding" in r && r.notBinding)) return { recorded: true };
    }
    return partitions.reportPartitionResult(this.streams, ctx, input);
  }

  abandonCleaning(ctx: CommandContext, target: { hostname: string; deviceUuid: string; requestId: string; reason: string }): Promise<boolean> {
    return cleaning.abandonCleaning(this.streams, ctx, target);
  }

  unbindArqs(ctx: CommandContext, arqUuids: string[]): Promise<ArqView[]> {
    return arqs.unbindArqs(this.streams, ctx, arqUuids);
  }

  /** A project's quota limits and usage. */
  projectQuota(projectId: string): Promise<quotas.ProjectQuotaView> {
    return quotas.projectQuota(this.streams, this.quota, projectId);
  }

  setProjectQuota(ctx: CommandContext, projectId: string, limits: ReadonlyArray<{ resourceClass: string; limit: number | null }>): Promise<quotas.ProjectQuotaView> {
    return quotas.setProjectQuota(this.streams, this.quota, ctx, projectId, limits);
  }

  deleteArqs(ctx: CommandContext, sel: arqs.DeleteSelection): Promise<string[]> {
    return arqs.deleteArqs(this.streams, ctx, sel);
  }

  releaseHandleForArq(ctx: CommandContext, hostname: string, arqUuid: string): Promise<void> {
    return inventory.releaseHandleForArq(this.streams, ctx, hostname, arqUuid);
  }

  /**
   * Checks an ARQ against the hosts that may hold a handle for it and its profile, and repairs
   * what a decision stopped halfway left behind (the invariant checker's step); the repairs done.
   */
  repairArqInvariants(ctx: CommandContext, arqUuid: string, hostnames: readonly string[], claimedBy: string | null = null): Promise<arqs.Repair[]> {
    return arqs.repairArq(this.streams, ctx, arqUuid, hostnames, claimedBy);
  }

  getArq(arqUuid: string): Promise<ArqView | null> {
    return arqs.getArq(this.streams, arqUuid);
  }

  /** ARQs for inline specs (os-acc): the content-named profile they stand for is made on first use. */
  createArqsForGroups(ctx: CommandContext, groups: unknown): Promise<ArqView[]> {
    return arqs.createArqsForGroups(this.streams, this.newId, ctx, groups, this.quota);
  }

  /** Records an instance operation and releases the instance's accelerators when it calls for it. */
  recordInstanceOperation(ctx: CommandContext, instanceUuid: string, operation: string): Promise<InstanceOperationResult> {
    return instances.recordInstanceOperation(this.streams, ctx, instanceUuid, operation);
  }
}

function partsOf(opts: ApplicationOptions): ApplicationParts {
  const streams = new Streams(opts.store, new AggregateCache(opts.cacheSize), undefined, { keepIdlePartitions: opts.keepIdlePartitions ?? false, hostBooks: opts.hostBooks });
  const newId = opts.newId ?? randomUUID;
  const b = opts.bitstreams ?? {};
  const catalogue =
    b.catalogue ?? new EmbeddedCatalogue(streams, new ContentStore(b.contentDir ?? join(tmpdir(), `cyborg-es-bitstreams-${process.pid}`), b.maxBytes ?? 1 << 30), newId);
  const reportTimes = new ReportTimes(validLivenessPolicy(opts.liveness ?? DEFAULT_LIVENESS));
  return { streams, newId, reportDigests: new ReportDigests(), reportTimes, quota: opts.quota, maxBindings: opts.maxBindings ?? Infinity, catalogue, healthRules: opts.healthRules ?? DEFAULT_HEALTH_RULES };
}
