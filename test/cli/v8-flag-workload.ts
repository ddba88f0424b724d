/**
 * V8 flags belong to the process: a test of a setting that `serve` applies compiles its module
 * (src/cli/<name>.ts, which imports nothing of the project) into a directory of its own beside a
 * workload that imports it, and runs the workload in a node of its own.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { transformFileSync } from "@swc/core";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export interface FlagWorkload {
  /** Runs the workload with these node options, and the environment's NODE_OPTIONS emptied. */
  run(nodeArgs: readonly string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string };
  remove(): void;
}

/** `name` is the module under src/cli (and the workload imports `./<name>.mjs`); `workload` its lines. */
export function flagWorkload(name: string, workload: readonly string[]): FlagWorkload {
  const dir = mkdtempSync(join(tmpdir(), `cyborg-es-${name}-`));
  const { code } = transformFileSync(join(repo, `src/cli/${name}.ts`), { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } });
  writeFileSync(join(dir, `${name}.mjs`), code);
  writeFileSync(join(dir, "workload.mjs"), workload.join("\n"));
  return {
    run: (nodeArgs, env) => spawnSync(process.execPath, [...nodeArgs, join(dir, "workload.mjs")], { env: { ...process.env, NODE_OPTIONS: "", ...env }, encoding: "utf8" }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
