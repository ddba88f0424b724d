import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { transformFileSync } from "@swc/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEAP_GROWTH_PERCENT, wantsHeapGrowth } from "../../src/cli/heap-growth.js";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

describe("serve's heap growth", () => {
  it("is set unless node's command line sets it or node's defaults are asked for", () => {
    expect(wantsHeapGrowth([], {})).toBe(true);
    expect(wantsHeapGrowth(["--max-semi-space-size=64", "--no-memory-reducer"], {})).toBe(true);
    expect(wantsHeapGrowth(["--heap-growing-percent=50"], {})).toBe(false);
    expect(wantsHeapGrowth(["--heap_growing_percent=50"], {})).toBe(false);
    expect(wantsHeapGrowth([], { CYBORG_ES_NODE_DEFAULTS: "1" })).toBe(false);
  });

  // V8 flags belong to the process: each case runs in a node of its own, which prints V8's limit
  // for the old generation after each collection (--trace-gc-verbose: "Limit: ... (factor)").
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-heap-growth-"));
  beforeAll(() => {
    const { code } = transformFileSync(join(repo, "src/cli/heap-growth.ts"), { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } });
    writeFileSync(join(dir, "heap-growth.mjs"), code);
    writeFileSync(
      join(dir, "workload.mjs"),
      [
        `import { settleHeapGrowth } from "./heap-growth.mjs";`,
        `console.log(JSON.stringify({ percent: settleHeapGrowth() ?? null }));`,
        `const keep = [];`,
        `for (let r = 0; r < 10; r++) for (let i = 0; i < 200000; i++) keep.push({ a: i, b: "x" + i });`,
        `globalThis.kept = keep.length;`,
      ].join("\n"),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (env: Record<string, string>) => {
    const r = spawnSync(process.execPath, ["--trace-gc-verbose", join(dir, "workload.mjs")], { env: { ...process.env, NODE_OPTIONS: "", ...env }, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const said = JSON.parse(r.stdout.split("\n").find((l) => l.startsWith("{"))!) as { percent: number | null };
    const factors = [...r.stdout.matchAll(/\[HeapController\] Limit: .* \(([0-9.]+)\)/g)].map((m) => Number(m[1]));
    return { said: said.percent, factors };
  };

  it("V8 sets every old-generation limit at twice what the collection kept once serve's setting is applied, and chooses itself with node's defaults", () => {
    const set = run({});
    expect(set.said).toBe(HEAP_GROWTH_PERCENT);
    expect(set.factors.length).toBeGreaterThan(0);
    expect(new Set(set.factors)).toEqual(new Set([1 + HEAP_GROWTH_PERCENT / 100]));
    const defaults = run({ CYBORG_ES_NODE_DEFAULTS: "1" });
    expect(defaults.said).toBeNull();
    expect(defaults.factors.length).toBeGreaterThan(0);
    expect(defaults.factors.some((f) => f !== 1 + HEAP_GROWTH_PERCENT / 100)).toBe(true);
  });
});
