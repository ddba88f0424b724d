/**
 * node's command line for `serve` (src/cli/node-flags.ts): what `npm start`, the Dockerfile and the
 * benchmarks' servers put before the CLI. The printing script is the built one (the suite's setup
 * builds the service).
 */
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { gcSettingRefusal, serveNodeFlags, SINGLE_THREADED_GC } from "../../src/cli/node-flags.js";
import { NO_MEMORY_REDUCER } from "../../src/cli/heap-growth.js";
import { YOUNG_GENERATION } from "../../src/cli/young-generation.js";

const script = resolve("dist/src/cli/node-flags.js");

describe("serve's node flags", () => {
  it("always a 64 MB young generation and no memory reducer; the collector on the main thread alone up to two cores", () => {
    for (const cores of [1, 2]) expect(serveNodeFlags(cores, {})).toEqual([YOUNG_GENERATION, NO_MEMORY_REDUCER, SINGLE_THREADED_GC]);
    for (const cores of [3, 4, 64]) expect(serveNodeFlags(cores, {})).toEqual([YOUNG_GENERATION, NO_MEMORY_REDUCER]);
  });

  it("keeps node's parallel collector when node's defaults are asked for", () => {
    expect(serveNodeFlags(2, { CYBORG_ES_NODE_DEFAULTS: "1" })).toEqual([YOUNG_GENERATION, NO_MEMORY_REDUCER]);
  });

  it("SINGLE_THREADED_GC decides instead of the core count; another value is refused", () => {
    expect(serveNodeFlags(64, { SINGLE_THREADED_GC: "true" })).toContain(SINGLE_THREADED_GC);
    expect(serveNodeFlags(2, { SINGLE_THREADED_GC: "true", CYBORG_ES_NODE_DEFAULTS: "1" })).toContain(SINGLE_THREADED_GC);
    expect(serveNodeFlags(2, { SINGLE_THREADED_GC: "false" })).toEqual([YOUNG_GENERATION, NO_MEMORY_REDUCER]);
    expect(serveNodeFlags(2, { SINGLE_THREADED_GC: "auto" })).toContain(SINGLE_THREADED_GC);
    expect(() => serveNodeFlags(2, { SINGLE_THREADED_GC: "yes" })).toThrow('SINGLE_THREADED_GC must be auto, true or false, not "yes"');
    const refused = spawnSync(process.execPath, [script], { encoding: "utf8", env: { ...process.env, SINGLE_THREADED_GC: "yes" } });
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("SINGLE_THREADED_GC must be auto, true or false");
    // npm start's way: a refused setting starts nothing.
    const started = spawnSync("sh", ["-c", `flags=$(${JSON.stringify(process.execPath)} ${JSON.stringify(script)}) && echo started $flags`], { encoding: "utf8", env: { ...process.env, SINGLE_THREADED_GC: "yes" } });
    expect(started.status).not.toBe(0);
    expect(started.stdout).toBe("");
  });

  it("serve refuses a SINGLE_THREADED_GC that node's command line did not get, or that is not valid", () => {
    expect(gcSettingRefusal([], {})).toBeUndefined();
    expect(gcSettingRefusal([], { SINGLE_THREADED_GC: "auto" })).toBeUndefined();
    expect(gcSettingRefusal([SINGLE_THREADED_GC], { SINGLE_THREADED_GC: "true" })).toBeUndefined();
    expect(gcSettingRefusal([], { SINGLE_THREADED_GC: "false" })).toBeUndefined();
    expect(gcSettingRefusal([SINGLE_THREADED_GC, "--no-single-threaded-gc"], { SINGLE_THREADED_GC: "false" })).toBeUndefined();
    expect(gcSettingRefusal([], { SINGLE_THREADED_GC: "true" })).toMatch(/SINGLE_THREADED_GC=true, but node was started without --single-threaded-gc.*node-flags\.js/);
    expect(gcSettingRefusal([SINGLE_THREADED_GC], { SINGLE_THREADED_GC: "false" })).toMatch(/SINGLE_THREADED_GC=false, but node was started with --single-threaded-gc/);
    expect(gcSettingRefusal([], { SINGLE_THREADED_GC: "on" })).toMatch(/must be auto, true or false/);
    // The built CLI: serve exits before it opens anything.
    const served = spawnSync(process.execPath, [resolve("dist/src/cli/index.js"), "serve"], { encoding: "utf8", env: { ...process.env, SINGLE_THREADED_GC: "true", DATA_DIR: "/nonexistent/never-created" }, timeout: 60_000 });
    expect(served.status).toBe(2);
    expect(served.stderr).toContain("SINGLE_THREADED_GC=true, but node was started without --single-threaded-gc");
  });

  it("prints them for this machine, and node starts with what it prints", () => {
    const printed = spawnSync(process.execPath, [script], { encoding: "utf8", env: { ...process.env, CYBORG_ES_NODE_DEFAULTS: "", SINGLE_THREADED_GC: "" } });
    expect(printed.status, printed.stderr).toBe(0);
    expect(printed.stdout).toBe(serveNodeFlags(availableParallelism(), {}).join(" "));
    // node refuses a flag it does not know ("bad option"): these it takes.
    const flags = serveNodeFlags(2, {});
    const started = spawnSync(process.execPath, [...flags, "-e", "process.stdout.write(process.execArgv.filter((a) => a.startsWith('--')).join(' '))"], { encoding: "utf8" });
    expect(started.status, started.stderr).toBe(0);
    expect(started.stdout).toBe(flags.join(" "));
  });
});
