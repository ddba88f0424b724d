/**
 * V8 watches where objects are allocated, and an allocation site whose objects mostly survive the
 * young generation is "pretenured": from then on it allocates straight into the old generation.
 * A service's first start replays the log into its read models, which keeps every decoded event
 * alive for a while; V8 then pretenures the sites that decode events (msgpack's readers) and the
 * folds that use them, and keeps doing so after the replay, when the same sites make short-lived
 * objects for every report and bind. Those objects then die in the old generation: a large fleet's
 * old generation fills with them, full collections come every minute or two, and each young
 * collection scans the pointers they hold (measured on 2,000 hosts: 2.5 instead of 7.5 MB promoted
 * each scavenge, scavenges of 4-7 ms instead of 18-26 ms). `serve` turns pretenuring off before
 * it loads anything; V8 reads the flag whenever it weighs a site, so setting it at run time takes
 * effect (node refuses the flag in NODE_OPTIONS). `--allocation-site-pretenuring` on node's command
 * line, or CYBORG_ES_NODE_DEFAULTS=1, keeps V8's default.
 */
import v8 from "node:v8";

export const NO_PRETENURING = "--no-allocation-site-pretenuring";

/** The flag on node's command line, either way. */
const FLAG = /^--(no-)?allocation[-_]site[-_]pretenuring$/;

/** Whether serve should turn pretenuring off: not when node's command line says anything about it, nor when node's defaults are asked for. */
export function wantsNoPretenuring(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return env.CYBORG_ES_NODE_DEFAULTS !== "1" && !execArgv.some((a) => FLAG.test(a));
}

/** Turns pretenuring off unless told otherwise; answers whether V8 pretenures from now on. */
export function settlePretenuring(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): boolean {
  if (wantsNoPretenuring(execArgv, env)) {
    v8.setFlagsFromString(NO_PRETENURING);
    return false;
  }
  return !execArgv.some((a) => FLAG.test(a) && a.startsWith("--no-"));
}
