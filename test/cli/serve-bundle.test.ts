/**
 * The server's bundle (scripts/build.mjs; loaded by `serve`, src/cli/serve-module.ts): `serve`
 * runs from it while it is not older than the compiled modules, and it carries the fingerprints of
 * the read models' code it was built from, so its snapshots are refused by other code as the
 * modules' are. The bundle is the one `npm run build` wrote (the suite's setup builds the service).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { buildSchema } from "graphql";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/redis-server.js";
import { bundleIsCurrent, bundleWanted } from "../../src/cli/serve-module.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { append, gpuHost } from "../projections/support.js";

const dist = resolve("dist");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cyborg-es-serve-bundle-"));
  dirs.push(d);
  return d;
};

describe("which code serve runs", () => {
  it("the bundle while it is not older than the modules; the modules when it is, or when there is none", () => {
    const dir = tempDir();
    const [bundle, module] = [join(dir, "serve.js"), join(dir, "serve.command.js")];
    writeFileSync(module, "");
    expect(bundleIsCurrent(bundle, module)).toBe(false);
    writeFileSync(bundle, "");
    utimesSync(module, 1000, 1000);
    utimesSync(bundle, 2000, 2000);
    expect(bundleIsCurrent(bundle, module)).toBe(true);
    utimesSync(module, 3000, 3000);
    expect(bundleIsCurrent(bundle, module)).toBe(false);
  });

  it("the built CLI loads serve from the bundle, or from the modules when SERVE_BUNDLE=false", async () => {
    const { serveModule } = (await import(pathToFileURL(join(dist, "src/cli/serve-module.js")).href)) as typeof import("../../src/cli/serve-module.js");
    const bundled = await import(pathToFileURL(join(dist, "server-bundle/serve.js")).href);
    const modules = await import(pathToFileURL(join(dist, "src/cli/serve.command.js")).href);
    expect(await serveModule({})).toBe(bundled);
    expect(await serveModule({ SERVE_BUNDLE: "true" })).toBe(bundled);
    expect(await serveModule({ SERVE_BUNDLE: "false" })).toBe(modules);
  });

  it("refuses a SERVE_BUNDLE that is neither true nor false", () => {
    expect(bundleWanted({})).toBe(true);
    expect(bundleWanted({ SERVE_BUNDLE: "false" })).toBe(false);
    expect(() => bundleWanted({ SERVE_BUNDLE: "no" })).toThrow(/SERVE_BUNDLE must be true or false, not "no"/);
  });
});

/** `serve` from the built CLI (so from the bundle) on `dataDir`, once /readyz answers; its admin token. */
async function startBuilt(dataDir: string, env: NodeJS.ProcessEnv = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(dist, "src/cli/index.js"), "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let [stdout, stderr] = ["", ""];
  child.stdout!.on("data", (c: Buffer) => void (stdout += c.toString("utf8")));
  child.stderr!.on("data", (c: Buffer) => void (stderr += c.toString("utf8")));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}: ${stderr.trim()}`);
      if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const admin = (JSON.parse(readFileSync(join(dataDir, "tokens.json"), "utf8")) as { tokens: Array<{ token: string }> }).tokens[0]!.token;
  const graphql = (query: string) =>
    fetch(`http://127.0.0.1:${port}/graphql`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${admin}` }, body: JSON.stringify({ query }) });
  return { graphql, stop, logs: () => stdout };
}

describe("the bundled server", () => {
  it("starts, serves, and writes snapshots that carry the fingerprints of the read models' code it was built from", async () => {
    const dataDir = tempDir();
    // A log to start on: an empty one has no first event for a snapshot to name.
    const log = await LmdbEventStore.open(join(dataDir, "events"));
    await append(log, gpuHost());
    await log.close();
    const server = await startBuilt(dataDir);
    try {
      // It serves the schema the repository fixes: every type under its own name (a bundler renames
      // classes that share a name, and class names are GraphQL type names).
      const res = await server.graphql("{ __schema { types { name } } }");
      const served = ((await res.json()) as { data: { __schema: { types: Array<{ name: string }> } } }).data.__schema.types.map((t) => t.name).filter((n) => !n.startsWith("__"));
      const fixed = Object.keys(buildSchema(readFileSync("schema/schema.graphql", "utf8")).getTypeMap()).filter((n) => !n.startsWith("__"));
      expect(served.sort()).toEqual(fixed.sort());
    } finally {
      await server.stop();
    }
    const { projectionLayouts } = (await import(pathToFileURL(join(dist, "src/service/projection-layouts.js")).href)) as typeof import("../../src/service/projection-layouts.js");
    const expected = projectionLayouts();
    const files = readdirSync(join(dataDir, "read-models")).filter((f) => f.endsWith(".snapshot"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const header = JSON.parse(readFileSync(join(dataDir, "read-models", f), "utf8").split("\n")[0]!) as { name: string; layout: string };
      expect(header.layout).toBe(expected[header.name]);
    }
    expect(existsSync(join(dist, "server-bundle/serve.js"))).toBe(true);
  });

  it("writes the audit index on a thread of its own: the thread's script is found from the bundle's chunk; runs as in production without NODE_ENV", async () => {
    const server = await startBuilt(tempDir(), { LOG_LEVEL: "info", NODE_ENV: undefined });
    try {
      expect((await server.graphql("{ deviceProfiles { name } }")).status).toBe(200);
    } finally {
      await server.stop();
    }
    const line = server.logs().split("\n").find((l) => l.includes('"writeThread"'));
    expect(line, "the audit index's log line").toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ projections: ["audit"], writeThread: true });
    const serving = server.logs().split("\n").find((l) => l.includes("cyborg-es is serving"));
    expect(JSON.parse(serving!)).toMatchObject({ nodeEnv: "production" });
    const v8 = server.logs().split("\n").find((l) => l.includes('"pretenuring"'));
    expect(JSON.parse(v8!)).toMatchObject({ pretenuring: false });
  });

  it("keeps a NODE_ENV that is set, and V8's pretenuring when node's defaults are asked for", async () => {
    const server = await startBuilt(tempDir(), { LOG_LEVEL: "info", NODE_ENV: "development", CYBORG_ES_NODE_DEFAULTS: "1" });
    await server.stop();
    const serving = server.logs().split("\n").find((l) => l.includes("cyborg-es is serving"));
    expect(JSON.parse(serving!)).toMatchObject({ nodeEnv: "development" });
    const v8 = server.logs().split("\n").find((l) => l.includes('"pretenuring"'));
    expect(JSON.parse(v8!)).toMatchObject({ pretenuring: true });
  });

  it("traces with OpenTelemetry when an OTLP endpoint is set: its packages load from the bundle", async () => {
    let received = 0;
    let got: () => void = () => undefined;
    const spans = new Promise<void>((r) => (got = r));
    const collector = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.url === "/v1/traces") {
          received++;
          got();
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => collector.listen(0, "127.0.0.1", () => r()));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const server = await startBuilt(tempDir(), { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "50" });
    try {
      expect((await server.graphql("{ deviceProfiles { name } }")).status).toBe(200);
      await spans;
      expect(received).toBeGreaterThan(0);
    } finally {
      await server.stop();
      await new Promise((r) => collector.close(r));
    }
  });
});
