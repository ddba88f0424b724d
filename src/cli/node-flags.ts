/**
 * node's command line for `serve`, as `npm start`, the Dockerfile and the benchmarks' servers run
 * it (V8 reads these flags only as it starts). Run as a script, it prints them for this machine:
 * `node $(node dist/src/cli/node-flags.js) dist/src/cli/index.js serve`.
 *
 * - A 64 MB young generation (young-generation.ts) and no memory reducer (heap-growth.ts).
 * - On a machine of two cores or fewer, V8 collects garbage on the main thread alone
 *   (`--single-threaded-gc`). Its parallel scavenges hand work to helper threads, and where the
 *   audit index's write thread, libuv's pool and the clients want the same two cores, the main
 *   thread's pause waits for helpers that are not running. bench:api at 64 clients on 2 vCPU, 14
 *   alternated pairs: bind p99 lower in 12 (medians 109 against 157 ms), the server's CPU
 *   against the load generator's about 4% lower; bench:osacc at 8 did not move (bench/RESULTS.md).
 *   With more cores the helpers have cores of their own, and node's default stays.
 *   CYBORG_ES_NODE_DEFAULTS=1 keeps it off.
 */
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { NO_MEMORY_REDUCER } from "./heap-growth.js";
import { YOUNG_GENERATION } from "./young-generation.js";

export const SINGLE_THREADED_GC = "--single-threaded-gc";

/** At most this many cores: the garbage collector runs on the main thread alone. */
export const SINGLE_THREADED_GC_UP_TO_CORES = 2;

/** The flags for `serve` on a machine of `cores` cores. */
export function serveNodeFlags(cores: number = availableParallelism(), env: NodeJS.ProcessEnv = process.env): string[] {
  const singleThreaded = cores <= SINGLE_THREADED_GC_UP_TO_CORES && env.CYBORG_ES_NODE_DEFAULTS !== "1";
  return [YOUNG_GENERATION, NO_MEMORY_REDUCER, ...(singleThreaded ? [SINGLE_THREADED_GC] : [])];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.stdout.write(serveNodeFlags().join(" "));
