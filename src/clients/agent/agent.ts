import { randomUUID } from "node:crypto";
import pRetry from "p-retry";
import type { DriverDevice } from "../../domain/inventory/report.js";
import type { Logger } from "../../infra/logger.js";
import { discoverAll } from "./drivers/index.js";
import { withHealth } from "./drivers/health/index.js";
import type { DriverEnv } from "./drivers/driver.js";
import { GraphQLRequestError, postGraphQL, type GraphQLClientOptions } from "./graphql-client.js";
import type { HostLock } from "./host-lock.js";
import { sendReport, type ReportAnswer } from "./report-protocol.js";

export interface AgentOptions {
  client: GraphQLClientOptions;
  hostname: string;
  drivers: string[];
  env: DriverEnv;
  intervalMs: number;
  log: Logger;
  /** Retries per report while the server is unreachable (then the next interval tries again). */
  retries?: number;
  minRetryMs?: number;
  /** Each driver's devices from its last successful discovery (kept across cycles by runAgent). */
  lastGood?: Map<string, DriverDevice[]>;
  /** Shared with the programming worker: a report is never discovered while a region is being programmed. */
  lock?: HostLock;
}

export interface ReportSummary extends ReportAnswer {
  devices: number;
  driverErrors: Array<{ driver: string; message: string }>;
}

/** Discover with every enabled driver (a failing driver is logged, the others still report) and report. */
export async function reportOnce(opts: AgentOptions): Promise<ReportSummary> {
  return opts.lock ? opts.lock.exclusive(() => discoverAndReport(opts)) : discoverAndReport(opts);
}

async function discoverAndReport(opts: AgentOptions): Promise<ReportSummary> {
  const found = await discoverAll(opts.drivers, opts.env, opts.log);
  const { errors, byDriver } = found;
  // Health is read with the inventory; a source that cannot be read says UNKNOWN, never fails the report.
  const devices = await withHealth(found.devices, opts.env);
  const lastGood = opts.lastGood ?? new Map<string, DriverDevice[]>();
  for (const [driver, found] of Object.entries(byDriver)) lastGood.set(driver, found);
  for (const e of errors) {
    // A failed driver's devices would look removed: send the last good ones as stubs, which the
    // server neither adds nor removes (cyborg-reference 5.3).
    const failedOutright = !(e.driver in byDriver);
    const kept = failedOutright ? (lastGood.get(e.driver) ?? []) : [];
    for (const d of kept) devices.push({ ...d, stub: true });
    opts.log.warn({ driver: e.driver, error: e.message, keptAsStubs: kept.length }, "driver failed; the other drivers still report");
  }
  // One key for this cycle's full report: a retry after a lost answer is answered, not applied again.
  const reportKey = randomUUID();
  const r = await pRetry(
    () => sendReport((query, variables, key) => postGraphQL(opts.client, query, variables, key), opts.hostname, devices, reportKey),
    {
      retries: opts.retries ?? 6,
      minTimeout: opts.minRetryMs ?? 1000,
      maxTimeout: 30_000,
      randomize: true,
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        // A busy service says when to come back (Retry-After): the agent waits at least that long.
        const retryAfterS = error instanceof GraphQLRequestError ? error.retryAfterS : undefined;
        opts.log.warn(
          { url: opts.client.url, attempt: attemptNumber, retriesLeft, error: error.message, retryAfterS },
          retriesLeft === 0
            ? `gave up on the service at ${opts.client.url} for this report`
            : retryAfterS !== undefined
              ? `the service at ${opts.client.url} is busy (${error.message}); sending the report again in ${retryAfterS} s`
              : `waiting for the service at ${opts.client.url} (${error.message}); retrying with backoff. ` +
                "Is it running there? --url, CYBORG_URL, or PORT and HOST as the service has them, say where it is",
        );
        if (retriesLeft > 0 && retryAfterS !== undefined) await new Promise((r) => setTimeout(r, retryAfterS * 1000));
      },
    },
  );
  const { confirmed: _confirmed, ...answer } = r;
  const summary: ReportSummary = { ...answer, devices: devices.length, driverErrors: errors };
  if (r.added || r.updated || r.removed) opts.log.info(summary, "inventory changed");
  else opts.log.debug(summary, "inventory unchanged");
  return summary;
}

/** Report at once, then every interval, until the signal aborts. A failed cycle never stops the loop. */
export async function runAgent(opts: AgentOptions, signal: AbortSignal): Promise<void> {
  const withMemory = { ...opts, lastGood: opts.lastGood ?? new Map<string, DriverDevice[]>() };
  while (!signal.aborted) {
    try {
      await reportOnce(withMemory);
    } catch (err) {
      opts.log.error({ error: (err as Error).message }, "report cycle failed; trying again at the next interval");
    }
    await sleep(opts.intervalMs, signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });
}
