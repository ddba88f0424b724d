#!/usr/bin/env node
/**
 * npm run build: the service (tsc -> dist/, then the server's bundle: esbuild -> one file that
 * `serve` loads, dist/server-bundle/serve.js) and the front end (vite -> dist/console/),
 * each step saying what it does and how long it took. With --if-stale (npm start), a step whose output is
 * newer than every one of its inputs is skipped, so a second start serves at once. Naming steps
 * (`service`, `console`) builds only those (the test suite's setup builds the console).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const ifStale = process.argv.includes("--if-stale");
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const bin = (name) => join("node_modules", ".bin", name);
const steps = [
  {
    name: "service",
    what: "the service (TypeScript, tsc)",
    expect: "about 25 s the first time",
    cmd: [bin("tsc"), "-p", "tsconfig.build.json"],
    inputs: ["src", "projections", "bench", "tsconfig.json", "tsconfig.build.json", "package-lock.json"],
    output: "dist/src/cli/index.js",
    after: bundleServer,
  },
  {
    name: "console",
    what: "the console and the GraphQL explorer (vite)",
    expect: "about a minute on 2 cores",
    cmd: [bin("vite"), "build", "--config", "console/vite.config.ts"],
    inputs: ["console", "package-lock.json"],
    output: "dist/console/index.html",
    after: reportBundle,
  },
];

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let max = s.mtimeMs;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

const say = (msg) => console.error(`[build] ${msg}`);
/** The server's bundle (bundleServer), loaded by `serve` (src/cli/serve-module.ts). */
const BUNDLE_DIR = "dist/server-bundle";

for (const step of steps) {
  if (only.length && !only.includes(step.name)) continue;
  if (ifStale && existsSync(step.output)) {
    const input = Math.max(...step.inputs.filter(existsSync).map(newest));
    if (statSync(step.output).mtimeMs > input) {
      say(`${step.what}: up to date`);
      continue;
    }
  }
  say(`building ${step.what}, ${step.expect}...`);
  const t0 = Date.now();
  // A production build whatever NODE_ENV the caller has (vite would bundle React's development build).
  const r = spawnSync(step.cmd[0], step.cmd.slice(1), { stdio: "inherit", env: { ...process.env, NODE_ENV: "production" } });
  if (r.status !== 0) {
    say(`${step.what}: failed (${r.error?.message ?? `exit code ${r.status}`})`);
    process.exit(r.status || 1);
  }
  say(`${step.what}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await step.after?.();
}

/**
 * The server in one file (and the chunks of what some modes load): node loads `serve` from it in about half the time it takes over the
 * compiled modules one by one (bench/RESULTS.md, "Restart"). Built from what tsc just wrote, with
 * the read models' code fingerprints taken from the same files (projection-layouts.ts), so a
 * snapshot is refused when the code the bundle runs differs. Left out: native addons and the
 * packages that load files by path at run time (they load from node_modules as before), and
 * commander, which the CLI has loaded already.
 */
async function bundleServer() {
  const t0 = Date.now();
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  const { build } = await import("esbuild");
  const { projectionLayouts } = await import(new URL("../dist/src/service/projection-layouts.js", import.meta.url).href);
  await build({
    // The read store's write thread, loaded by its path: an entry beside the main file (src/infra/readstore/lmdb-writer.ts finds it).
    entryPoints: { serve: "dist/src/cli/serve.command.js", "lmdb-write-thread": "dist/src/infra/readstore/lmdb-write-thread.js" },
    outdir: BUNDLE_DIR,
    // What the service imports only in some modes (EventStoreDB, Redis, Glance) stays in chunks loaded then, with the packages they import.
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // No keepNames: it defines the name of every function the bundle creates, inner closures
    // included, at each creation (about 55 a boot flow, 2.5% of the main thread's busy time;
    // bench/RESULTS.md). The bundler renames classes that share a name, so each GraphQL type is
    // named in its decorator, not by its class (test/cli/serve-bundle.test.ts serves the schema).
    keepNames: false,
    external: ["commander", "lmdb", "msgpackr-extract", "@eventstore/db-client", "pino-pretty", "class-validator"],
    define: { CYBORG_ES_PROJECTION_LAYOUTS: JSON.stringify(projectionLayouts()) },
    // The bundled CommonJS packages call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    logLevel: "warning",
  });
  say(`the server's bundle: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** What a browser downloads for /console (the files its page names) and for the whole build. */
function reportBundle() {
  const dir = "dist/console";
  const size = (files) => files.reduce((a, f) => {
    const body = readFileSync(join(dir, f));
    return { raw: a.raw + body.length, gzip: a.gzip + gzipSync(body).length };
  }, { raw: 0, gzip: 0 });
  const kb = (n) => `${(n / 1024).toFixed(0)} kB`;
  const page = [...readFileSync(join(dir, "index.html"), "utf8").matchAll(/\/console\/(assets\/[^"]+)/g)].map((m) => m[1]);
  const all = readdirSync(join(dir, "assets")).map((f) => `assets/${f}`);
  const c = size(page);
  const t = size(all);
  say(`console page: ${kb(c.raw)} (${kb(c.gzip)} gzip) in ${page.length} files; whole build with the explorer: ${kb(t.raw)} (${kb(t.gzip)} gzip)`);
}
