/**
 * Programming a region (the PROGRAM requests, program-handler.ts): download the bitstream from the
 * service, check it against its checksum, run the driver's program command, and report the outcome
 * (`reportProgrammingResult`).
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import pRetry, { AbortError } from "p-retry";
import type { Logger } from "../../infra/logger.js";
import { drivers as registry } from "./drivers/index.js";
import type { Driver, DriverEnv, Programmer, ProgramTarget } from "./drivers/driver.js";
import type { GraphQLClientOptions } from "./graphql-client.js";
import { reportUntilTaken } from "./report-result.js";
import type { HostLock } from "./host-lock.js";

export interface ProgrammingRequestMessage {
  requestId: string;
  hostname: string;
  deployableUuid: string;
  deployableName: string;
  driverName: string | null;
  controlPath: { type: string; info: Record<string, unknown> };
  bitstreamId: string;
  bitstreamName: string;
  checksum: string;
  size: number;
  functionId: string | null;
  downloadPath: string;
}

export interface ProgrammingOptions {
  client: GraphQLClientOptions;
  hostname: string;
  drivers: string[];
  env: DriverEnv;
  log: Logger;
  /** Held while a region is programmed, and by the inventory report: a report never shows a half-programmed region. */
  lock: HostLock;
  /** Where downloads are kept while they are checked and programmed (default: the system's temporary directory). */
  workDir?: string;
  registry?: Record<string, Driver>;
}

export interface ProgrammingOutcome {
  ok: boolean;
  command: string[] | null;
  durationMs: number | null;
  reason: string | null;
}

/** How long the download and its check took (logged, not reported). */
type Timed = ProgrammingOutcome & { downloadMs?: number };

const REPORT = `mutation Report($input: ProgrammingResultInput!) {
  reportProgrammingResult(input: $input) { recorded late }
}`;

/** Removes this worker's download directory (once its requests have run). */
export async function closeProgramming(opts: ProgrammingOptions): Promise<void> {
  const dir = await workDirs.get(opts)?.catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/** Downloads, checks, programs and reports one request; the report is retried until the service takes it. */
export async function handleRequest(opts: ProgrammingOptions, r: ProgrammingRequestMessage): Promise<ProgrammingOutcome> {
  const log = opts.log.child({ request: r.requestId, deployable: r.deployableName, bitstream: r.bitstreamId });
  log.info("programming requested");
  // The report is sent before the lock is let go: the next inventory report follows it.
  return opts.lock.shared(async () => {
    const outcome = await program(opts, r).catch(
      (err: Error): ProgrammingOutcome => ({ ok: false, command: null, durationMs: null, reason: `the agent could not program: ${err.message}` }),
    );
    const { downloadMs, ...reported } = outcome as Timed;
    if (outcome.ok) log.info({ command: outcome.command, durationMs: outcome.durationMs, downloadMs }, "programmed");
    else log.warn({ reason: outcome.reason, command: outcome.command }, "programming failed");
    await report(opts, r, reported);
    return reported;
  });
}

async function program(opts: ProgrammingOptions, r: ProgrammingRequestMessage): Promise<Timed> {
  const failed = (reason: string, command: string[] | null = null, durationMs: number | null = null): ProgrammingOutcome => ({ ok: false, command, durationMs, reason });
  const programmer = programmerFor(opts, r.driverName);
  if (!programmer) return failed(`no enabled driver of this agent (${opts.drivers.join(", ")}) programs ${r.driverName ?? "this"} deployables`);
  const file = join(await workDir(opts), `${r.requestId}.bin`);
  try {
    const d0 = performance.now();
    try {
      await download(opts, r, file);
    } catch (err) {
      return failed((err as Error).message);
    }
    const downloadMs = Math.round(performance.now() - d0);
    const target: ProgramTarget = {
      controlPath: r.controlPath.info as ProgramTarget["controlPath"],
      deployableName: r.deployableName,
      file,
      bitstream: { id: r.bitstreamId, name: r.bitstreamName, functionId: r.functionId },
    };
    const t0 = performance.now();
    try {
      const { command } = await programmer.program(opts.env, target);
      return { ok: true, command, durationMs: Math.round(performance.now() - t0), reason: null, downloadMs };
    } catch (err) {
      return failed((err as Error).message || String(err), programmer.command(target), Math.round(performance.now() - t0));
    }
  } finally {
    await rm(file, { force: true }).catch((err: Error) => opts.log.warn({ err: err.message, file }, "could not remove a downloaded bitstream"));
  }
}

const workDirs = new WeakMap<ProgrammingOptions, Promise<string>>();

/** Where this worker keeps downloads: its own directory, made once (`workDir`, or under the system's temporary directory). */
function workDir(opts: ProgrammingOptions): Promise<string> {
  let dir = workDirs.get(opts);
  if (!dir) {
    dir = mkdtemp(join(opts.workDir ?? tmpdir(), "cyborg-es-bitstreams-"));
    workDirs.set(opts, dir);
    dir.catch(() => workDirs.delete(opts));
  }
  return dir;
}

function programmerFor(opts: ProgrammingOptions, driverName: string | null): Programmer | undefined {
  const reg = opts.registry ?? registry;
  for (const name of opts.drivers) {
    const p = reg[name]?.programmer;
    if (p && driverName !== null && p.driverNames.includes(driverName)) return p;
  }
  return undefined;
}

/** The content into `file`, hashed on the way; anything but the announced checksum is refused before a driver sees it. */
async function download(opts: ProgrammingOptions, r: ProgrammingRequestMessage, file: string): Promise<void> {
  const [algorithm, expected] = r.checksum.split(":") as [string, string];
  const url = new URL(r.downloadPath, opts.client.url);
  const hash = createHash(algorithm);
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  // node:http rather than fetch: the body is a Node stream, without web-stream conversion per chunk.
  const res = await pRetry(() => get(url, opts.client.token, r.bitstreamId), { retries: 3, minTimeout: 500, maxTimeout: 5000 });
  await pipeline(res, hashing, createWriteStream(file));
  const got = hash.digest("hex");
  if (got !== expected) throw new Error(`checksum mismatch for bitstream ${r.bitstreamId}: expected ${r.checksum}, got ${algorithm}:${got}`);
}

/** GET with the agent's token: the response stream on 200; a retryable error on 5xx or no answer; AbortError otherwise. */
function get(url: URL, token: string, bitstreamId: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === "https:" ? https : http).get(url, { headers: { authorization: `Bearer ${token}` }, timeout: 60_000 }, (res) => {
      if (res.statusCode === 200) return resolve(res);
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.length < 8 && chunks.push(c));
      res.on("end", () => {
        const message = `downloading bitstream ${bitstreamId}: HTTP ${res.statusCode} ${Buffer.concat(chunks).toString("utf8").slice(0, 300)}`;
        reject((res.statusCode ?? 500) >= 500 ? new Error(message) : new AbortError(message));
      });
    });
    req.on("timeout", () => req.destroy(new Error(`downloading bitstream ${bitstreamId}: no answer from ${url.origin}`)));
    req.on("error", (err) => reject(new Error(`cannot download bitstream ${bitstreamId} from ${url.origin}: ${err.message}`)));
  });
}

/** Reports until the service takes it (it may be restarting); a report it refuses for good is dropped. */
function report(opts: ProgrammingOptions, r: ProgrammingRequestMessage, outcome: ProgrammingOutcome): Promise<void> {
  return reportUntilTaken(opts, "programming", REPORT, { hostname: r.hostname, deployableUuid: r.deployableUuid, requestId: r.requestId, ...outcome });
}
