/**
 * When V8 starts a full collection: once the old generation has grown by a factor of what the last
 * one kept. V8 picks the factor from how fast it marks against how fast the program allocates
 * there, aiming to spend 3% of the time collecting, and for a large heap with a little old-generation
 * garbage it picks its smallest (1.1). A fleet's read models are such a heap: 1.2-1.4 GB kept at
 * 10,000 hosts, about 1 MB/s of old-generation garbage. It was collected whole every 100-150 s,
 * each time with a second of marking (300-600 ms of it on the main thread) and a 30-80 ms pause,
 * and the reports and binds that came meanwhile waited.
 *
 * `serve` sets a fixed factor of 2 (the old generation may double what the last collection kept):
 * at 10,000 hosts, at most one full collection in 10 minutes in four runs (four to six before), for
 * up to another heap's worth of memory (V8 still caps the limit halfway to the heap's maximum). V8 reads the flag at every
 * collection, so setting it at run time takes effect (node refuses it in NODE_OPTIONS).
 * `--heap-growing-percent` on node's command line, or CYBORG_ES_NODE_DEFAULTS=1, keeps V8's own.
 * V8's memory reducer (collections it adds when it thinks the program went quiet) is set up before
 * any code runs: `npm start` and the Dockerfile turn it off on node's command line.
 */
import v8 from "node:v8";

export const HEAP_GROWTH_PERCENT = 100;

/** For node's command line (`npm start`, the Dockerfile, the benchmarks' servers): V8 reads it only as it starts. */
export const NO_MEMORY_REDUCER = "--no-memory-reducer";

/** The flag on node's command line, with any value. */
const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/** Whether serve should set the factor: not when node's command line sets it, nor when node's defaults are asked for. */
export function wantsHeapGrowth(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return env.CYBORG_ES_NODE_DEFAULTS !== "1" && !execArgv.some((a) => FLAG.test(a));
}

/** Sets the factor unless told otherwise; answers the percent set, or undefined where V8 (or node's command line) decides. */
export function settleHeapGrowth(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (!wantsHeapGrowth(execArgv, env)) return undefined;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWTH_PERCENT}`);
  return HEAP_GROWTH_PERCENT;
}
