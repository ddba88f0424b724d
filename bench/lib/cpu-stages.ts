/**
 * Where a server's CPU time goes, by stage of a request, from a `node --cpu-prof` profile. Each
 * sample is charged to the stage of the innermost frame on its stack that a stage claims (so
 * JSON.parse called by a projection is the projection's, a hash computed for the log's chain is
 * the chain's); samples no stage claims are "other" (node's own work between stages). Idle
 * samples are left out. bench:api, bench:rest and bench:osacc `--profile` print the result in
 * microseconds a flow (a cycle).
 */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  /** Microseconds since the previous sample. */
  timeDeltas: number[];
  /** When the profile began (microseconds on a clock the process's threads share). */
  startTime?: number;
}

/** In the order they are tried on a frame; the innermost frame any of them claims decides. */
export const STAGES: ReadonlyArray<{ stage: string; test: (url: string, fn: string) => boolean }> = [
  { stage: "garbage collection", test: (_u, fn) => fn === "(garbage collector)" },
  { stage: "log: hash chain", test: (u) => /\/infra\/eventstore\/chain/.test(u) },
  // LMDB itself (node_modules/lmdb, msgpackr) is charged to its caller: the log, the audit index or a read model.
  { stage: "log: append and reads (LMDB)", test: (u) => /\/infra\/eventstore\//.test(u) },
  { stage: "audit index", test: (u) => /\/projections\/audit\/|\/infra\/readstore\/(disk-index|lmdb|index-cache)/.test(u) },
  { stage: "read models (projections)", test: (u) => /\/projections\/|\/reactors\/projector\/|\/infra\/readstore\//.test(u) },
  { stage: "notifications and subscriptions", test: (u) => /\/infra\/pubsub\/|\/api\/notification-router|\/api\/graphql-ws|\/node_modules\/(graphql-ws|ws)\//.test(u) },
  { stage: "metrics", test: (u) => /\/node_modules\/prom-client\/|\/src\/observability\//.test(u) },
  { stage: "rate limits", test: (u) => /\/node_modules\/rate-limiter-flexible\/|\/api\/rate-limit/.test(u) },
  { stage: "idempotency", test: (u) => /idempotency/.test(u) },
  { stage: "binder and reactors", test: (u) => /\/src\/reactors\//.test(u) },
  { stage: "application and domain", test: (u) => /\/src\/(app|domain)\//.test(u) },
  { stage: "REST API", test: (u) => /\/src\/api\/rest\//.test(u) },
  { stage: "GraphQL parse and validate", test: (u) => /\/node_modules\/graphql\/(language|validation)\/|graphql-query-complexity|\/api\/graphql\/(guards|document-cache|list-guard)/.test(u) },
  { stage: "GraphQL execution", test: (u) => /\/node_modules\/(graphql|type-graphql|@apollo|dataloader|graphql-scalars)\/|\/src\/api\//.test(u) },
  { stage: "HTTP", test: (u) => /^node:(_http|http|net|stream|internal\/(http|streams|stream_base))|\/node_modules\/raw-body\//.test(u) },
];

export interface StageTimes {
  /** Busy CPU time (ms) per stage, largest first; "other" last. */
  stages: Array<{ stage: string; ms: number; share: number }>;
  busyMs: number;
}

/** The busy time of samples taken between `skipMs` and `untilMs` from the profile's start (leaving out its start-up and stop), by stage. */
export function stageTimes(p: CpuProfile, skipMs = 0, untilMs = Infinity): StageTimes {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    const { url, functionName } = byId.get(id)!.callFrame;
    const own = STAGES.find((s) => s.test(url, functionName))?.stage;
    const up = parent.get(id);
    const stage = own ?? (up === undefined ? "other" : classify(up));
    stageOf.set(id, stage);
    return stage;
  };
  const ms = new Map<string, number>();
  let at = 0;
  let busy = 0;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    at += dt;
    if (at < skipMs || at > untilMs || byId.get(id)!.callFrame.functionName === "(idle)") return;
    const stage = classify(id);
    ms.set(stage, (ms.get(stage) ?? 0) + dt);
    busy += dt;
  });
  return ranked(ms, busy);
}

/** The stage of the process's threads that no profile covers (V8's compiler and garbage collector helpers, libuv's pool). */
export const UNPROFILED = "threads not profiled (V8's helpers, libuv's pool)";

/**
 * A flow's CPU by stage, in microseconds: the main thread's CPU (from /proc) split by its
 * profile's stages, each other profiled thread's busy time as `threadStage`, and what the process
 * spent beyond both (all threads, from /proc) as UNPROFILED, instead of spreading it over the
 * stages: the threads no profile sees (TurboFan compiling, the collector's helpers, lmdb's commits
 * on libuv's pool) are not the main thread's stages.
 */
export function flowCostByStage(
  profiles: readonly CpuProfile[],
  threadStage: string,
  window: { skipMs: number; untilMs: number },
  cpu: { flows: number; mainMs: number; allMs: number },
): Array<{ stage: string; usPerFlow: number }> {
  if (profiles.length === 0) throw new RangeError("no profile to read");
  const start = (p: CpuProfile) => p.startTime ?? 0;
  const main = profiles.reduce((a, b) => (start(b) < start(a) ? b : a));
  const perFlow = (ms: number) => Math.round((ms * 1000) / cpu.flows);
  const mainStages = stageTimes(main, window.skipMs, window.untilMs).stages;
  const threadsMs = profiles
    .filter((p) => p !== main)
    .reduce((sum, p) => {
      const offset = (start(p) - start(main)) / 1000;
      return sum + stageTimes(p, window.skipMs - offset, window.untilMs - offset).busyMs;
    }, 0);
  const out = mainStages.map((s) => ({ stage: s.stage, usPerFlow: perFlow(s.share * cpu.mainMs) }));
  if (threadsMs > 0) out.push({ stage: threadStage, usPerFlow: perFlow(threadsMs) });
  out.push({ stage: UNPROFILED, usPerFlow: perFlow(Math.max(0, cpu.allMs - cpu.mainMs - threadsMs)) });
  return out.sort((a, b) => (a.stage === "other" ? 1 : b.stage === "other" ? -1 : b.usPerFlow - a.usPerFlow));
}

/** Busy time by stage as shares of `busy`, largest first, "other" last. */
function ranked(ms: ReadonlyMap<string, number>, busy: number): StageTimes {
  const stages = [...ms]
    .map(([stage, t]) => ({ stage, ms: t, share: busy > 0 ? t / busy : 0 }))
    .sort((a, b) => (a.stage === "other" ? 1 : b.stage === "other" ? -1 : b.ms - a.ms));
  return { stages, busyMs: busy };
}
