/**
 * Replaying the log into read models (replay, projections rebuild) folds events fast and keeps a
 * batch alive while it writes it: with node's default young generation (16 MB semi-spaces) a large
 * share of its time goes to scavenges. These commands run with 64 MB semi-spaces, which V8 sets
 * only at start: the CLI starts itself again with the flag, unless it has it already (or
 * CYBORG_ES_NODE_DEFAULTS=1 asks for node's defaults). Measured with `cyborg-es replay --into
 * memory` over 200,000 events on 2 vCPU: 34,333-34,700 events/s with the defaults, 54,991-58,852
 * with the flag. audit verify (worker threads) and audit export measured slower with it, so they
 * keep the defaults. The benchmarks run with the same flag (bench/lib/tuned-entry.ts).
 */
import { spawn } from "node:child_process";

export const YOUNG_GENERATION = "--max-semi-space-size=64";

/** Subcommands (by their first words) that run with the larger young generation. */
const BATCH = [["replay"], ["projections", "rebuild"]];

/** Whether these CLI arguments (after the script) name a replaying command that is not tuned yet. */
export function wantsYoungGeneration(args: readonly string[], execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  if (env.CYBORG_ES_NODE_DEFAULTS === "1") return false;
  const tuned = (s: string | undefined) => s !== undefined && s.includes("--max-semi-space-size");
  if (execArgv.some(tuned) || tuned(env.NODE_OPTIONS)) return false;
  const words = args.filter((a) => !a.startsWith("-"));
  return BATCH.some((cmd) => cmd.every((w, i) => words[i] === w));
}

/**
 * Runs this CLI again with the flag, passing stdin, stdout, stderr and signals through, and exits
 * as it exits. The caller stops doing anything else.
 */
export function relaunchWithYoungGeneration(): void {
  const child = spawn(process.execPath, [YOUNG_GENERATION, ...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
  // Ctrl-C reaches the child itself (same process group): forwarding it would deliver it twice.
  process.on("SIGINT", () => undefined);
  for (const s of ["SIGTERM", "SIGHUP"] as const) process.on(s, () => child.kill(s));
  child.on("error", (err) => {
    console.error(`cyborg-es: cannot start node again with ${YOUNG_GENERATION}: ${err.message} (CYBORG_ES_NODE_DEFAULTS=1 runs without it)`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
