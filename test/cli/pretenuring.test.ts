import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wantsNoPretenuring } from "../../src/cli/pretenuring.js";
import { flagWorkload, type FlagWorkload } from "./v8-flag-workload.js";

describe("serve's pretenuring setting", () => {
  it("turns pretenuring off unless node's command line says otherwise or node's defaults are asked for", () => {
    expect(wantsNoPretenuring([], {})).toBe(true);
    expect(wantsNoPretenuring(["--max-semi-space-size=64"], { NODE_OPTIONS: "--max-old-space-size=8192" })).toBe(true);
    expect(wantsNoPretenuring(["--allocation-site-pretenuring"], {})).toBe(false);
    expect(wantsNoPretenuring(["--allocation_site_pretenuring"], {})).toBe(false);
    expect(wantsNoPretenuring(["--no-allocation-site-pretenuring"], {})).toBe(false);
    expect(wantsNoPretenuring([], { CYBORG_ES_NODE_DEFAULTS: "1" })).toBe(false);
  });

  // Each case runs in a node of its own, which reports V8's pretenuring decisions
  // (--trace-pretenuring-statistics) on a workload whose objects all survive.
  let workload: FlagWorkload;
  beforeAll(() => {
    workload = flagWorkload("pretenuring", [
      `import { settlePretenuring } from "./pretenuring.mjs";`,
      `console.log(JSON.stringify({ pretenuring: settlePretenuring() }));`,
      `function make(i) { return { a: i, b: "x" + i, c: [i] }; }`,
      `const keep = [];`,
      `for (let r = 0; r < 20; r++) for (let i = 0; i < 200000; i++) keep.push(make(i));`,
      `globalThis.kept = keep.length;`,
    ]);
  });
  afterAll(() => workload.remove());

  const run = (env: Record<string, string>) => {
    const r = workload.run(["--trace-pretenuring-statistics"], env);
    expect(r.status, r.stderr).toBe(0);
    const said = JSON.parse(r.stdout.split("\n").find((l) => l.startsWith("{"))!) as { pretenuring: boolean };
    return { said: said.pretenuring, tenured: r.stdout.split("\n").filter((l) => /=> tenure/.test(l)).length };
  };

  it("V8 pretenures nothing once serve's setting is applied, and does with node's defaults", () => {
    const off = run({});
    expect(off).toEqual({ said: false, tenured: 0 });
    const defaults = run({ CYBORG_ES_NODE_DEFAULTS: "1" });
    expect(defaults.said).toBe(true);
    expect(defaults.tenured).toBeGreaterThan(0);
  });
});
