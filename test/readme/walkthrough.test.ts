/**
 * The README's quick start and walk-through, as a newcomer runs them: `npm start` (which builds
 * what is stale and says so), then the walk-through's shell block, taken from README.md as it is
 * written, in bash with curl and jq. A README step that stops working fails here.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/redis-server.js";

const MARKER = "<!-- walkthrough:";

export function walkthroughBlock(readme: string): string {
  const at = readme.indexOf(MARKER);
  if (at < 0) throw new Error(`README.md has no ${MARKER} marker`);
  const m = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!m) throw new Error("no ```sh block after the walk-through marker");
  return m[1]!;
}

describe("README: npm start, then the walk-through as written", () => {
  let server: ChildProcess;
  let dataDir: string;
  let port: number;
  let output = "";

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-readme-"));
    port = await freePort();
    // Its own process group, so that stopping it stops npm, the shell and the service.
    // As a user's shell runs it: without vitest's NODE_ENV=test.
    const { NODE_ENV: _, ...env } = process.env;
    server = spawn("npm", ["start"], { env: { ...env, PORT: String(port), DATA_DIR: dataDir }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    server.stdout!.on("data", (c: Buffer) => (output += c.toString()));
    server.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 240_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`npm start exited with ${server.exitCode}:\n${output}`);
      if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`npm start was not ready within 240 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 250_000);

  afterAll(async () => {
    if (server?.pid && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      process.kill(-server.pid, "SIGTERM");
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("npm start says what it does before it serves", () => {
    expect(output).toMatch(/\[build\] the service \(TypeScript, tsc\): (up to date|done in)/);
    expect(output).toMatch(/\[build\] the console and the GraphQL explorer \(vite\): (up to date|done in)/);
    expect(output).toContain(`tokens for the admin and the compute service are in ${dataDir}`);
    expect(output).toContain("cyborg-es is serving");
  });

  it("runs every step of the walk-through", () => {
    const script = walkthroughBlock(readFileSync("README.md", "utf8"));
    const r = spawnSync("bash", ["-euo", "pipefail", "-c", script], {
      env: { ...process.env, PORT: String(port), DATA_DIR: dataDir },
      encoding: "utf8",
      timeout: 60_000,
    });
    const out = r.stdout;
    expect(r.status, `${out}\n${r.stderr}`).toBe(0);
    expect(out).not.toContain('"errors"');
    expect(out).toContain('"createDeviceProfile":{');
    expect(out).toMatch(/compute1: 1 devices reported; added 1/);
    expect(out).toContain('"resourceClass":"FPGA"');
    expect(out).toMatch(/"bindAcceleratorRequests":\[\{"uuid":"[0-9a-f-]{36}","state":"BOUND","hostname":"compute1"\}\]/);
    expect(out).toMatch(/"acceleratorRequests":\{"nodes":\[\{"uuid":"[0-9a-f-]{36}","state":"BOUND","attachHandleType":"TEST_PCI","attachHandleInfo":\{/);
    expect(out).toContain('"type":"ArqBound"');
  });

  it("stops cleanly on Ctrl-C (the service's own shutdown, not Apollo's)", async () => {
    const exited = new Promise((r) => server.once("exit", r));
    process.kill(-server.pid!, "SIGINT"); // what a terminal sends to the foreground process group
    await exited;
    const deadline = Date.now() + 10_000;
    while (!output.includes('"msg":"stopped"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(output).toContain('"msg":"stopped"');
  });

  it("the docs the README points to are in the repository", () => {
    const readme = readFileSync("README.md", "utf8");
    for (const [, path] of readme.matchAll(/\b((?:docs|bench|deploy|schema)\/[\w./-]+\.(?:md|png|json|graphql))\b/g)) {
      expect(spawnSync("test", ["-f", path!]).status, path).toBe(0);
    }
  });
});
