import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEAP_GROWTH_PERCENT, wantsHeapGrowth } from "../../src/cli/heap-growth.js";
import { flagWorkload, type FlagWorkload } from "./v8-flag-workload.js";

describe("serve's heap growth", () => {
  it("is set unless node's command line sets it or node's defaults are asked for", () => {
    expect(wantsHeapGrowth([], {})).toBe(true);
    expect(wantsHeapGrowth(["--max-semi-space-size=64", "--no-memory-reducer"], {})).toBe(true);
    expect(wantsHeapGrowth(["--heap-growing-percent=50"], {})).toBe(false);
    expect(wantsHeapGrowth(["--heap_growing_percent=50"], {})).toBe(false);
    expect(wantsHeapGrowth([], { CYBORG_ES_NODE_DEFAULTS: "1" })).toBe(false);
  });

  // Each case runs in a node of its own, which prints V8's limit for the old generation after
  // each collection (--trace-gc-verbose: "Limit: ... (factor)").
  let workload: FlagWorkload;
  beforeAll(() => {
    workload = flagWorkload("heap-growth", [
      `import { settleHeapGrowth } from "./heap-growth.mjs";`,
      `console.log(JSON.stringify({ percent: settleHeapGrowth() ?? null }));`,
      `const keep = [];`,
      `for (let r = 0; r < 10; r++) for (let i = 0; i < 200000; i++) keep.push({ a: i, b: "x" + i });`,
      `globalThis.kept = keep.length;`,
    ]);
  });
  afterAll(() => workload.remove());

  const run = (env: Record<string, string>) => {
    const r = workload.run(["--trace-gc-verbose"], env);
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
