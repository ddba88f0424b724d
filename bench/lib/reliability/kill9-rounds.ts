/**
 * SIGKILL during a boot storm: clients run Nova's boot flow against the service in a child
 * process, the process is killed with SIGKILL at a random moment, started again on the same
 * DATA_DIR (and the same Redis, when it has one), and then:
 * - no acknowledged write is lost: every ARQ whose creation was answered is there (unless a
 *   delete was sent for it), bound to the instance its acknowledged bind named; every ARQ whose
 *   delete was answered is gone;
 * - no ARQ stays BIND_STARTED past BIND_TIMEOUT_S (the binder finishes or fails what the crash
 *   left);
 * - no attach handle is allocated to two ARQs.
 */
import { runBootFlows, type FlowStats, type Ledger, type Target } from "./boot-flows.js";
import type { ServiceProcess } from "./service-process.js";
import { gql } from "./wire.js";

export interface RoundResult {
  round: number;
  stormMs: number;
  flows: number;
  acknowledged: number;
  ackedLost: number;
  doubleAllocations: number;
  stuckBindStarted: number;
  /** What was lost or doubled, for a failure message. */
  problems: string[];
}

export interface Kill9Options {
  service: ServiceProcess;
  profile: string;
  targets: Target[];
  clients: number;
  bindTimeoutS: number;
  /** The storm runs a random time in [min, max] ms before the kill. */
  stormMs: [number, number];
  /** A seeded random source (the caller prints the seed). */
  random: () => number;
  onRound?: (r: RoundResult) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Beyond BIND_TIMEOUT_S, how long the binder gets to fail what the crash left, on a slow machine. */
const BINDER_GRACE_MS = 90_000;

interface ArqRow {
  uuid: string;
  state: string;
  instanceUuid: string | null;
  attachHandleUuid: string | null;
}

/** Every ARQ, as the admin sees them, page by page. */
export async function allArqs(url: string): Promise<ArqRow[]> {
  const out: ArqRow[] = [];
  let after: string | null = null;
  for (;;) {
    const page: any = await gql(url, "admin", `query($a: String) { acceleratorRequests(first: 1000, after: $a) { pageInfo { hasNextPage endCursor } nodes { uuid state instanceUuid attachHandleUuid } } }`, { a: after });
    out.push(...page.acceleratorRequests.nodes);
    if (!page.acceleratorRequests.pageInfo.hasNextPage) return out;
    after = page.acceleratorRequests.pageInfo.endCursor;
  }
}

/** What the ledger says must hold, against the ARQs the service shows now. */
export function checkLedger(ledger: Ledger, arqs: ArqRow[]): string[] {
  const byUuid = new Map(arqs.map((a) => [a.uuid, a]));
  const problems: string[] = [];
  for (const [uuid, e] of ledger) {
    const arq = byUuid.get(uuid);
    if (e.deleted) {
      if (arq) problems.push(`ARQ ${uuid}: its delete was acknowledged, but it is back (${arq.state})`);
      continue;
    }
    if (e.deleteSent) continue; // an unanswered delete may or may not have happened
    if (!arq) {
      problems.push(`ARQ ${uuid}: its creation was acknowledged, but it is gone`);
      continue;
    }
    if (e.boundTo && arq.instanceUuid !== e.boundTo) {
      problems.push(`ARQ ${uuid}: its bind to instance ${e.boundTo} was acknowledged, but it shows ${arq.state} with instance ${arq.instanceUuid}`);
    }
  }
  return problems;
}

/** Attach handles held by more than one BOUND ARQ. */
export function doubleAllocations(arqs: ArqRow[]): string[] {
  const holders = new Map<string, string[]>();
  for (const a of arqs) {
    if (a.state !== "BOUND" || !a.attachHandleUuid) continue;
    holders.set(a.attachHandleUuid, [...(holders.get(a.attachHandleUuid) ?? []), a.uuid]);
  }
  return [...holders].filter(([, h]) => h.length > 1).map(([handle, h]) => `attach handle ${handle} is held by ${h.join(" and ")}`);
}

/**
 * Waits until no ARQ is BIND_STARTED, at most BIND_TIMEOUT_S plus a generous grace after the
 * restart; returns the ARQs still BIND_STARTED then (stuck ones).
 */
export async function waitForBindsToResolve(url: string, bindTimeoutS: number, restartedAt: number): Promise<ArqRow[]> {
  const deadline = restartedAt + bindTimeoutS * 1000 + BINDER_GRACE_MS;
  for (;;) {
    const started = (await allArqs(url)).filter((a) => a.state === "BIND_STARTED");
    if (started.length === 0 || Date.now() > deadline) return started;
    await sleep(500);
  }
}

/** One round: storm, kill -9, restart, check. The service must be running when it is called. */
export async function kill9Round(opts: Kill9Options, round: number): Promise<RoundResult> {
  const { service } = opts;
  const ledger: Ledger = new Map();
  const stats: FlowStats = { flows: 0, failed: 0, errors: [] };
  let running = true;
  const storm = runBootFlows({ url: service.url, profile: opts.profile, targets: opts.targets, ledger, waitBy: "poll" }, opts.clients, () => running, stats);
  const [min, max] = opts.stormMs;
  const stormMs = Math.round(min + opts.random() * (max - min));
  await sleep(stormMs);
  await service.kill9();
  running = false;
  await storm;
  await service.start();
  const restartedAt = Date.now();

  const stuck = await waitForBindsToResolve(service.url, opts.bindTimeoutS, restartedAt);
  const arqs = await allArqs(service.url);
  const lost = checkLedger(ledger, arqs);
  const doubled = doubleAllocations(arqs);
  const result: RoundResult = {
    round,
    stormMs,
    flows: stats.flows,
    acknowledged: ledger.size,
    ackedLost: lost.length,
    doubleAllocations: doubled.length,
    stuckBindStarted: stuck.length,
    problems: [...lost, ...doubled, ...stuck.map((a) => `ARQ ${a.uuid} is still BIND_STARTED after BIND_TIMEOUT_S`)].slice(0, 20),
  };
  opts.onRound?.(result);
  // The next round starts from a clean slate of handles: what this round left bound is released.
  await releaseAll(service.url, arqs);
  return result;
}

/** Deletes every ARQ left by a round (by instance where bound, else by uuid). */
async function releaseAll(url: string, arqs: ArqRow[]): Promise<void> {
  const instances = [...new Set(arqs.map((a) => a.instanceUuid).filter((i): i is string => Boolean(i)))];
  for (const i of instances) await gql(url, "service", `mutation($i: ID) { deleteAcceleratorRequests(instanceUuid: $i) }`, { i });
  const loose = (await allArqs(url)).map((a) => a.uuid);
  for (let k = 0; k < loose.length; k += 500) await gql(url, "service", `mutation($u: [ID!]) { deleteAcceleratorRequests(arqUuids: $u) }`, { u: loose.slice(k, k + 500) });
}
