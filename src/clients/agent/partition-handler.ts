/**
 * The CREATE_PARTITION and DESTROY_PARTITION requests: the partitioner of the driver that made the
 * device's partitioning (its driverName) makes a partition a bind waits for, or destroys one its
 * ARQ released, and the outcome is reported with `reportPartitionResult`: the partition made (as
 * discovery would list it), the command and how long it took, or why it failed. The host lock is
 * held as for programming and cleaning: no inventory report shows a device halfway through, and
 * the answer is recorded before the next report.
 */
import type { DriverPartition, SlotPlacement } from "../../domain/inventory/partitioning-report.js";
import { drivers as registry } from "./drivers/index.js";
import type { CleaningOptions } from "./clean-handler.js";
import type { CreatePartitionTarget, Partitioner } from "./drivers/driver.js";
import { reportUntilTaken } from "./report-result.js";
import type { AgentRequestHandler } from "./requests.js";

export interface PartitionRequestMessage {
  requestId: string;
  hostname: string;
  deviceUuid: string;
  action: "CREATE" | "DESTROY";
  driverName: string | null;
  controlPath: Record<string, unknown>;
  profile: { name: string; toolId: string } | null;
  placement: SlotPlacement | null;
  arqUuid: string | null;
  uuid: string | null;
  toolRef: Record<string, string | number> | null;
}

/** What a request handler works with: the same as the clean handler's. */
export type PartitionOptions = CleaningOptions;

export interface PartitionOutcome {
  ok: boolean;
  partition: DriverPartition | null;
  command: string[] | null;
  durationMs: number | null;
  reason: string | null;
}

const SELECTION = "requestId hostname deviceUuid action driverName controlPath profile { name toolId } placement { start size } arqUuid uuid toolRef";

const REPORT = `mutation Report($input: PartitionResultInput!) {
  reportPartitionResult(input: $input) { recorded }
}`;

/** One handler per kind; both run on the device's lane, so a destroy and a create on one device never overlap. */
export function partitionHandlers(opts: PartitionOptions): Array<AgentRequestHandler<PartitionRequestMessage>> {
  const handle = (r: PartitionRequestMessage) => handlePartition(opts, r);
  return [
    { kind: "CREATE_PARTITION", field: "partition", selection: SELECTION, lane: (r) => `partitions:${r.deviceUuid}`, handle },
    { kind: "DESTROY_PARTITION", field: "partition", selection: SELECTION, lane: (r) => `partitions:${r.deviceUuid}`, handle },
  ];
}

export async function handlePartition(opts: PartitionOptions, r: PartitionRequestMessage): Promise<PartitionOutcome> {
  const log = opts.log.child({ request: r.requestId, device: r.deviceUuid, action: r.action });
  log.info({ profile: r.profile?.name, placement: r.placement, partition: r.uuid, arq: r.arqUuid }, r.action === "CREATE" ? "partition to make" : "partition to destroy");
  return opts.lock.shared(async () => {
    const outcome = await run(opts, r);
    if (outcome.ok) log.info({ command: outcome.command, durationMs: outcome.durationMs, partition: outcome.partition?.uuid ?? r.uuid }, r.action === "CREATE" ? "partition made" : "partition destroyed");
    else log.warn({ reason: outcome.reason, command: outcome.command }, r.action === "CREATE" ? "could not make the partition" : "could not destroy the partition");
    await reportUntilTaken(opts, "partition", REPORT, { hostname: r.hostname, requestId: r.requestId, ...outcome });
    return outcome;
  });
}

async function run(opts: PartitionOptions, r: PartitionRequestMessage): Promise<PartitionOutcome> {
  const failed = (reason: string, durationMs: number | null = null): PartitionOutcome => ({ ok: false, partition: null, command: null, durationMs, reason });
  const partitioner = partitionerFor(opts, r.driverName);
  if (!partitioner) return failed(`no enabled driver of this agent (${opts.drivers.join(", ")}) makes partitions of driver ${r.driverName ?? "(none)"}`);
  const controlPath = r.controlPath as CreatePartitionTarget["controlPath"];
  const t0 = performance.now();
  const took = () => Math.round(performance.now() - t0);
  try {
    if (r.action === "CREATE") {
      if (!r.profile) return failed("the request names no profile to make");
      const { command, partition } = await partitioner.create(opts.env, { controlPath, profile: r.profile, placement: r.placement });
      return { ok: true, partition, command, durationMs: took(), reason: null };
    }
    if (!r.uuid) return failed("the request names no partition to destroy");
    const { command } = await partitioner.destroy(opts.env, { controlPath, uuid: r.uuid, toolRef: r.toolRef ?? {} });
    return { ok: true, partition: null, command, durationMs: took(), reason: null };
  } catch (err) {
    return failed((err as Error).message || String(err), took());
  }
}

/** The partitioner of the first enabled driver whose partitioner takes the driver name. */
export function partitionerFor(opts: Pick<PartitionOptions, "drivers" | "registry">, driverName: string | null): Partitioner | undefined {
  if (driverName === null) return undefined;
  const reg = opts.registry ?? registry;
  for (const name of opts.drivers) {
    const p = reg[name]?.partitioner;
    if (p?.driverNames.includes(driverName)) return p;
  }
  return undefined;
}
