/**
 * A benchmark's server under node's CPU profiler, and its CPU split by stage afterwards
 * (cpu-stages.ts flowCostByStage): bench:api and bench:osacc `--profile`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flowCostByStage, type CpuProfile } from "./cpu-stages.js";
import { namedThreadsCpuSeconds, processTreeCpuMs, threadCpuSeconds } from "./process-cpu.js";

/** The thread V8's CPU profiler processes its samples on (/proc comm): the profiler's cost, not the server's. */
export const PROFILER_THREAD = "v8:ProfEvntProc";

/** A server's CPU in ms: all its processes' (the API workers too), its main thread's, its profiler's threads'; null where /proc does not show it. */
export interface ServerCpu {
  allMs: number | null;
  mainMs: number | null;
  profilerMs: number | null;
}

/** The server's CPU so far (no pid: nothing known). */
export function serverCpu(pid: number | undefined): ServerCpu {
  const ms = (s: number | null) => (s === null ? null : s * 1000);
  if (pid === undefined) return { allMs: null, mainMs: null, profilerMs: null };
  return { allMs: processTreeCpuMs(pid), mainMs: ms(threadCpuSeconds(pid)), profilerMs: ms(namedThreadsCpuSeconds(pid, PROFILER_THREAD)) };
}

/** The CPU the server took between two readings of serverCpu. */
export function cpuSpent(before: ServerCpu, after: ServerCpu): ServerCpu {
  const spent = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  return { allMs: spent(before.allMs, after.allMs), mainMs: spent(before.mainMs, after.mainMs), profilerMs: spent(before.profilerMs, after.profilerMs) };
}

/**
 * Makes the next startBenchServer run its server under `node --cpu-prof` into `dir` (a new
 * temporary directory when not given, removed once read), from its modules: the stages are told
 * apart by the files on a sample's stack, not the bundle's one file.
 */
export function profileNextServer(dir?: string): { dir: string; keep: boolean } {
  const target = dir ?? mkdtempSync(join(tmpdir(), "cyborg-es-cpu-prof-"));
  process.env.BENCH_SERVER_NODE_ARGS = `${process.env.BENCH_SERVER_NODE_ARGS ?? ""} --cpu-prof --cpu-prof-dir=${target}`;
  process.env.SERVE_BUNDLE = "false";
  return { dir: target, keep: dir !== undefined };
}

/**
 * Reads the profiles the stopped server wrote (one a thread: the main thread's, and the audit
 * index's write thread), prints the server's CPU a unit of work by stage and returns it. `cpu`:
 * over the measured work, in ms, the whole process's (the profiler's threads included), the main
 * thread's and the profiler's threads'; `window`: when the measured work ran, in ms from the
 * server's start.
 */
export function splitProfiledCpu(
  profiled: { dir: string; keep: boolean },
  window: { skipMs: number; untilMs: number },
  cpu: { units: number; allMs: number; mainMs: number; profilerMs: number },
  unit: string,
): Array<{ stage: string; usPerFlow: number; pct: number }> {
  const files = readdirSync(profiled.dir).filter((f) => f.endsWith(".cpuprofile"));
  if (files.length === 0) throw new Error(`the server wrote no CPU profile into ${profiled.dir}`);
  const profiles = files.map((f) => JSON.parse(readFileSync(join(profiled.dir, f), "utf8")) as CpuProfile);
  if (!profiled.keep) rmSync(profiled.dir, { recursive: true, force: true });
  const allMs = cpu.allMs - cpu.profilerMs;
  const stages = flowCostByStage(profiles, "audit index: its write thread", window, { flows: cpu.units, mainMs: cpu.mainMs, allMs });
  const per = (ms: number) => ((ms * 1000) / cpu.units).toFixed(0);
  process.stderr.write(
    `server CPU a ${unit} ${per(allMs)} us (all threads; ${per(cpu.profilerMs)} us more in the profiler's own threads, left out), the main thread's ${per(cpu.mainMs)} us (${profiles.length} threads profiled)\n`,
  );
  const out = stages.map((s) => ({ ...s, pct: +((100 * s.usPerFlow * cpu.units) / (allMs * 1000)).toFixed(1) }));
  for (const s of out) process.stderr.write(`  ${s.stage.padEnd(50)} ${String(s.usPerFlow).padStart(6)} us/${unit}  ${s.pct.toFixed(1).padStart(5)}%\n`);
  return out;
}
