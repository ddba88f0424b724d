/**
 * node's command line for `serve`, as `npm start`, the Dockerfile and the benchmarks' servers run
 * it (V8 reads these flags only as it starts). Run as a script, it prints them for this machine:
 * `flags=$(node dist/src/cli/node-flags.js) && node $flags dist/src/cli/index.js serve`.
 *
 * - A 64 MB young generation (young-generation.ts) and no memory reducer (heap-growth.ts).
 * - On a machine of two cores or fewer, V8 collects garbage on the main thread alone
 *   (`--single-threaded-gc`). Its parallel scavenges hand work to helper threads, and where the
 *   audit index's write thread, libuv's pool and the clients want the same two cores, the main
 *   thread's pause waits for helpers that are not running. bench:api at 64 clients on 2 vCPU, 14
 *   alternated pairs: bind p99 lower in 12 (medians 109 against 157 ms), the server's CPU
 *   against the load generator's about 4% lower; bench:osacc at 8 did not move (bench/RESULTS.md).
 *   With more cores the helpers have cores of their own, and node's default stays. On a server
 *   still compiling, bench:programming's bursts of ten 256 KiB downloads came out with a lower p50
 *   and a higher p99 of overhead with it; warm, no difference (bench/RESULTS.md).
 *   `SINGLE_THREADED_GC=true` or `false` decides instead
 *   of the core count; CYBORG_ES_NODE_DEFAULTS=1 keeps it off unless the setting says true.
 *
 * Run as a script with a SINGLE_THREADED_GC that is none of auto, true and false, it prints why and
 * exits 1 (`npm start` and the Dockerfile then do not start the service).
 */
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { NO_MEMORY_REDUCER } from "./heap-growth.js";
import { YOUNG_GENERATION } from "./young-generation.js";

export const SINGLE_THREADED_GC = "--single-threaded-gc";

/** At most this many cores: the garbage collector runs on the main thread alone. */
export const SINGLE_THREADED_GC_UP_TO_CORES = 2;

/** `SINGLE_THREADED_GC`: unset, empty or `auto` decides by the core count; `true`, `false`; anything else is refused. */
export function singleThreadedGcSetting(env: NodeJS.ProcessEnv): "auto" | "true" | "false" {
  const v = env.SINGLE_THREADED_GC || "auto";
  if (v === "auto" || v === "true" || v === "false") return v;
  throw new Error(`SINGLE_THREADED_GC must be auto, true or false, not ${JSON.stringify(v.slice(0, 40))}`);
}

/** The flags for `serve` on a machine of `cores` cores. */
export function serveNodeFlags(cores: number = availableParallelism(), env: NodeJS.ProcessEnv = process.env): string[] {
  const setting = singleThreadedGcSetting(env);
  const auto = cores <= SINGLE_THREADED_GC_UP_TO_CORES && env.CYBORG_ES_NODE_DEFAULTS !== "1";
  const singleThreaded = setting === "true" || (setting === "auto" && auto);
  return [YOUNG_GENERATION, NO_MEMORY_REDUCER, ...(singleThreaded ? [SINGLE_THREADED_GC] : [])];
}

/** Whether node's command line turns the single-threaded collector on (the last of the flag and its negation decides). */
function singleThreadedOnCommandLine(execArgv: readonly string[]): boolean {
  let on = false;
  for (const a of execArgv) {
    if (a === SINGLE_THREADED_GC || a === "--single_threaded_gc") on = true;
    if (a === "--no-single-threaded-gc" || a === "--no-single_threaded_gc") on = false;
  }
  return on;
}

/**
 * For `serve`: why it refuses to start, or undefined. A SINGLE_THREADED_GC that is not valid is
 * refused, and so is `true` or `false` where node's command line says otherwise: V8 takes the flag
 * only as it starts, so a setting that the process did not get would be a setting ignored.
 */
export function gcSettingRefusal(execArgv: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  let setting: ReturnType<typeof singleThreadedGcSetting>;
  try {
    setting = singleThreadedGcSetting(env);
  } catch (err) {
    return (err as Error).message;
  }
  if (setting === "auto") return undefined;
  const on = singleThreadedOnCommandLine(execArgv);
  if ((setting === "true") === on) return undefined;
  return (
    `SINGLE_THREADED_GC=${setting}, but node was started ${on ? "with" : "without"} ${SINGLE_THREADED_GC}, which V8 takes only as it starts: ` +
    "start the service as npm start does, flags=$(node dist/src/cli/node-flags.js) && node $flags dist/src/cli/index.js serve"
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.stdout.write(serveNodeFlags().join(" "));
  } catch (err) {
    process.stderr.write(`cyborg-es: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
