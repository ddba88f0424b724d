/**
 * The CLEAN requests: run the clean step of the driver that cleans the device (a GPU reset, an FPGA
 * loaded with its blank image, a QAT function reset) and report the outcome with
 * `reportCleaningResult`: the command, how long it took and the driver's digest, or why it failed.
 * The host lock is held as for programming: no inventory report shows a device halfway through.
 */
import type { Logger } from "../../infra/logger.js";
import { drivers as registry } from "./drivers/index.js";
import type { CleanTarget, Cleaner, Driver, DriverEnv } from "./drivers/driver.js";
import type { GraphQLClientOptions } from "./graphql-client.js";
import type { HostLock } from "./host-lock.js";
import { reportUntilTaken } from "./report-result.js";
import type { AgentRequestHandler } from "./requests.js";

export interface CleaningRequestMessage {
  requestId: string;
  hostname: string;
  deviceUuid: string;
  deviceType: string;
  driverNames: string[];
  controlPath: { type: string; info: Record<string, unknown> };
  reason: string;
}

export interface CleaningOptions {
  client: GraphQLClientOptions;
  hostname: string;
  drivers: string[];
  env: DriverEnv;
  log: Logger;
  lock: HostLock;
  registry?: Record<string, Driver>;
}

export interface CleaningOutcome {
  ok: boolean;
  digest: string | null;
  command: string[] | null;
  durationMs: number | null;
  reason: string | null;
}

const SELECTION = "requestId hostname deviceUuid deviceType driverNames controlPath reason";

const REPORT = `mutation Report($input: CleaningResultInput!) {
  reportCleaningResult(input: $input) { recorded }
}`;

export function cleanHandler(opts: CleaningOptions): AgentRequestHandler<CleaningRequestMessage> {
  return { kind: "CLEAN", field: "clean", selection: SELECTION, lane: (r) => r.deviceUuid, handle: (r) => handleCleaning(opts, r) };
}

/** Cleans one device and reports; the report is sent before the lock is let go, so the next inventory report follows it. */
export async function handleCleaning(opts: CleaningOptions, r: CleaningRequestMessage): Promise<CleaningOutcome> {
  const log = opts.log.child({ request: r.requestId, device: r.deviceUuid });
  log.info({ reason: r.reason }, "cleaning requested");
  return opts.lock.shared(async () => {
    const outcome = await clean(opts, r);
    if (outcome.ok) log.info({ command: outcome.command, durationMs: outcome.durationMs, digest: outcome.digest }, "cleaned");
    else log.warn({ reason: outcome.reason, command: outcome.command }, "cleaning failed");
    await reportUntilTaken(opts, "cleaning", REPORT, { hostname: r.hostname, deviceUuid: r.deviceUuid, requestId: r.requestId, ...outcome });
    return outcome;
  });
}

async function clean(opts: CleaningOptions, r: CleaningRequestMessage): Promise<CleaningOutcome> {
  const failed = (reason: string, command: string[] | null = null, durationMs: number | null = null): CleaningOutcome => ({ ok: false, digest: null, command, durationMs, reason });
  const cleaner = cleanerFor(opts, r);
  if (!cleaner) return failed(`no enabled driver of this agent (${opts.drivers.join(", ")}) cleans ${r.deviceType} devices of driver ${r.driverNames.join(", ") || "(none)"}`);
  if (r.controlPath.type !== "PCI") return failed(`cannot clean a device whose control path is ${r.controlPath.type}, not PCI`);
  const target: CleanTarget = { controlPath: r.controlPath.info as CleanTarget["controlPath"], deviceType: r.deviceType, driverNames: r.driverNames };
  const t0 = performance.now();
  try {
    const { command, digest } = await cleaner.clean(opts.env, target);
    return { ok: true, digest, command, durationMs: Math.round(performance.now() - t0), reason: null };
  } catch (err) {
    return failed((err as Error).message || String(err), cleaner.command(target), Math.round(performance.now() - t0));
  }
}

/** The cleaner of the first enabled driver that takes the device's driver name (and type, where a name is shared). */
export function cleanerFor(opts: Pick<CleaningOptions, "drivers" | "registry">, r: Pick<CleaningRequestMessage, "deviceType" | "driverNames">): Cleaner | undefined {
  const reg = opts.registry ?? registry;
  for (const name of opts.drivers) {
    const c = reg[name]?.cleaner;
    if (!c || !r.driverNames.some((n) => c.driverNames.includes(n))) continue;
    if (c.deviceTypes && !c.deviceTypes.includes(r.deviceType)) continue;
    return c;
  }
  return undefined;
}
