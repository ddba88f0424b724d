/**
 * How an agent reports a host: first ask whether the server already has this inventory
 * (confirmHostInventory with the report's digest, a few hundred bytes), and send the whole report
 * only when it answers null. An unchanged host, the common case, costs one small request.
 */
import { reportDigest } from "../../domain/inventory/digest.js";
import type { DriverDevice } from "../../domain/inventory/report.js";
import type { DriverPartitioning } from "../../domain/inventory/partitioning-report.js";
import type { InventoryReportView } from "../../app/inventory.js";

/** One GraphQL call: resolves `data`, throws on errors. */
export type PostGraphQL = <T>(query: string, variables: Record<string, unknown>, idempotencyKey?: string) => Promise<T>;

/** What the agent asks for of the server's InventoryReport (no digest: see FIELDS). */
export type ReportAnswer = Omit<InventoryReportView, "digest">;

export interface SentReport extends ReportAnswer {
  /** The server confirmed the digest: the report itself was not sent. */
  confirmed: boolean;
}

// No `digest` here: a server from before confirmHostInventory must still take the report.
const FIELDS = "hostname added updated removed unchanged revision";
const CONFIRM = `mutation Confirm($hostname: String!, $digest: String!) {
  confirmHostInventory(hostname: $hostname, digest: $digest) { ${FIELDS} }
}`;
const REPORT = `mutation Report($hostname: String!, $devices: [DriverDeviceInput!]!) {
  reportHostInventory(hostname: $hostname, devices: $devices) { ${FIELDS} }
}`;

export async function sendReport(post: PostGraphQL, hostname: string, devices: DriverDevice[], reportKey?: string): Promise<SentReport> {
  const inputs = devices.map(toInput);
  const digest = digestOf(inputs);
  if (digest !== null) {
    const confirmed = await confirm(post, hostname, digest);
    if (confirmed) return { ...confirmed, confirmed: true };
  }
  return reportDroppingNewFields(post, hostname, inputs, reportKey, []);
}

/** The optional fields a service from before them refuses; the inventory goes through without them. */
const NEWER_FIELDS = ["health", "topology", "partitioning", "capacities"] as const;

async function reportDroppingNewFields(post: PostGraphQL, hostname: string, inputs: Array<Record<string, unknown>>, reportKey: string | undefined, dropped: string[]): Promise<SentReport> {
  const key = reportKey && (dropped.length > 0 ? `${reportKey}-without-${dropped.join("-")}` : reportKey);
  try {
    const { reportHostInventory } = await post<{ reportHostInventory: ReportAnswer }>(REPORT, { hostname, devices: inputs }, key);
    return { ...reportHostInventory, confirmed: false };
  } catch (err) {
    const field = refusedField(err);
    if (field === null || dropped.includes(field)) throw err;
    // A service from before device health or topology: the inventory still goes through, without it.
    const plain = inputs.map((d) => Object.fromEntries(Object.entries(d).filter(([k]) => k !== field)));
    return reportDroppingNewFields(post, hostname, plain, reportKey, [...dropped, field]);
  }
}

/** GraphQL's refusal of an input field the server's schema lacks: `Field "health" is not defined by type "DriverDeviceInput"`. */
function refusedField(err: unknown): string | null {
  const message = err instanceof Error ? `${err.message} ${(err.cause as Error | undefined)?.message ?? ""}` : "";
  return NEWER_FIELDS.find((f) => new RegExp(`Field "${f}" is not defined by type "DriverDeviceInput"`).test(message)) ?? null;
}

/** null for a report the server will refuse: the full report then brings back its error. */
function digestOf(inputs: unknown[]): string | null {
  try {
    return reportDigest(inputs);
  } catch {
    return null;
  }
}

/**
 * A confirmation the server refused as an operation falls through to the full report, whose answer
 * is the one that counts: a server from before confirmHostInventory refuses the operation, and an
 * agent must still report. Any other failure (no answer in time, a busy or failing server) is the
 * report's failure, retried as any other: sending the whole report to a server that could not
 * answer a few hundred bytes would only add to its load (a fleet's agents all at once).
 */
async function confirm(post: PostGraphQL, hostname: string, digest: string): Promise<ReportAnswer | null> {
  try {
    return (await post<{ confirmHostInventory: ReportAnswer | null }>(CONFIRM, { hostname, digest })).confirmHostInventory;
  } catch (err) {
    if (refusedAsOperation(err)) return null;
    throw err;
  }
}

/** The server answered and refused the confirmation itself (an unknown field, an input it does not take). */
function refusedAsOperation(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  const message = err instanceof Error ? err.message : "";
  return code === "GRAPHQL_VALIDATION_FAILED" || code === "BAD_USER_INPUT" || /GRAPHQL_VALIDATION_FAILED|BAD_USER_INPUT|Cannot query field "?confirmHostInventory/.test(message);
}

/** GraphQL input objects accept exactly the input fields: drop anything else a driver carries. */
function toInput(d: DriverDevice): Record<string, unknown> {
  return {
    type: d.type,
    vendor: d.vendor,
    model: d.model,
    stdBoardInfo: d.stdBoardInfo ?? null,
    vendorBoardInfo: d.vendorBoardInfo ?? null,
    controlPath: { type: d.controlPath.type, info: d.controlPath.info },
    additionalControlPaths: (d.additionalControlPaths ?? []).map((c) => ({ type: c.type, info: c.info })),
    stub: d.stub ?? false,
    ...(d.topology ? { topology: { numaNode: d.topology.numaNode, pcieRoot: d.topology.pcieRoot, pcieSwitch: d.topology.pcieSwitch, linkDomain: d.topology.linkDomain } } : {}),
    ...(d.health ? { health: { status: d.health.status, reasons: d.health.reasons.map((r) => ({ code: r.code, message: r.message, count: r.count ?? null })) } } : {}),
    ...(d.partitioning ? { partitioning: partitioningInput(d.partitioning) } : {}),
    ...(d.capacities && d.capacities.length > 0 ? { capacities: d.capacities.map((c) => ({ name: c.name, resourceClass: c.resourceClass, total: c.total, unit: c.unit })) } : {}),
    deployables: d.deployables.map((dep) => ({
      name: dep.name,
      numAccelerators: dep.numAccelerators,
      driverName: dep.driverName ?? null,
      parentName: dep.parentName ?? null,
      attributes: dep.attributes.map((a) => ({ key: a.key, value: a.value, parentKey: a.parentKey ?? null })),
      attachHandles: dep.attachHandles.map((h) => ({ type: h.type, info: h.info })),
    })),
  };
}

function partitioningInput(p: DriverPartitioning): Record<string, unknown> {
  return {
    driverName: p.driverName ?? null,
    counters: p.counters.map((c) => ({ name: c.name, total: c.total })),
    slots: p.slots,
    oneProfileAtATime: p.oneProfileAtATime,
    profiles: p.profiles.map((x) => ({
      name: x.name,
      toolId: x.toolId,
      resourceClass: x.resourceClass,
      consumes: x.consumes.map((c) => ({ counter: c.counter, amount: c.amount })),
      placements: x.placements.map((s) => ({ start: s.start, size: s.size })),
      maxInstances: x.maxInstances,
    })),
    partitions: p.partitions.map((x) => ({
      profile: x.profile,
      uuid: x.uuid,
      placement: x.placement ? { start: x.placement.start, size: x.placement.size } : null,
      toolRef: x.toolRef,
      attachHandle: { type: x.attachHandle.type, info: x.attachHandle.info },
    })),
  };
}
