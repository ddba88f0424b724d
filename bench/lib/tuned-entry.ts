import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The projector's recommended V8 setting: a 64 MB young generation. A rebuild allocates fast and
 * keeps two batches alive, so with the default (16 MB) a sixth of the time goes to scavenges;
 * --expose-gc lets a benchmark collect the garbage of generating its log before measuring.
 */
export const TUNING = ["--max-semi-space-size=64", "--expose-gc"];

/**
 * Runs `main` when the module is the entry point (a benchmark's generators stay importable), in a
 * child process with TUNING unless it has it already (BENCH_NO_TUNING=1: node's defaults).
 */
export function runAsEntryPoint(moduleUrl: string, main: () => Promise<void>): void {
  if (!process.argv[1] || fileURLToPath(moduleUrl) !== resolve(process.argv[1])) return;
  if (!process.env.BENCH_NO_TUNING && !process.execArgv.some((a) => a.startsWith("--max-semi-space-size"))) {
    const child = spawnSync(process.execPath, [...TUNING, ...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: "inherit" });
    process.exit(child.status ?? 1);
  }
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
