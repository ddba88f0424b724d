/**
 * The first hour of a newcomer, as written: `npm start` on a fresh DATA_DIR (which builds what is
 * stale and says so, then prints where everything is), then every shell example of README.md and
 * docs/ in the order a reader follows them (test/readme/examples.ts), in bash with curl and jq,
 * each starting from the state the one before left. An example that stops working fails here.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/redis-server.js";
import { allExamples, scriptFor, unordered, untaggedCommands, type Example } from "./examples.js";

const examples = allExamples(".");
const nameOf = (e: Example) => `${e.file}:${e.line}${e.skip ? ` (not run here: ${e.skip})` : ""}`;

/** What each example must show beside exiting 0 and answering no GraphQL error, by its first words. */
function checks(e: Example, out: string): void {
  if (e.file === "README.md" && e.code.includes("createDeviceProfile")) {
    expect(out).toContain('"createDeviceProfile":{');
    expect(out).toMatch(/compute1: 1 devices reported; added 1/);
    expect(out).toContain('"resourceClass":"FPGA"');
    expect(out).toMatch(/"bindAcceleratorRequests":\[\{"uuid":"[0-9a-f-]{36}","state":"BOUND","hostname":"compute1"\}\]/);
    expect(out).toMatch(/"acceleratorRequests":\{"nodes":\[\{"uuid":"[0-9a-f-]{36}","state":"BOUND","attachHandleType":"TEST_PCI","attachHandleInfo":\{/);
    expect(out).toContain('"type":"ArqBound"');
  }
}

describe("the first hour: npm start, then every example in the docs as written", () => {
  let server: ChildProcess;
  let dataDir: string;
  let work: string;
  let port: number;
  let output = "";
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-readme-"));
    work = mkdtempSync(join(tmpdir(), "cyborg-es-examples-"));
    port = await freePort();
    // As a user's shell runs it: without vitest's NODE_ENV=test, and none of our CYBORG_ settings.
    const { NODE_ENV: _, ...rest } = process.env;
    env = Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith("CYBORG_")));
    env = { ...env, PORT: String(port), DATA_DIR: dataDir };
    // Its own process group, so that stopping it stops npm, the shell and the service.
    server = spawn("npm", ["start"], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    server.stdout!.on("data", (c: Buffer) => (output += c.toString()));
    server.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + 400_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`npm start exited with ${server.exitCode}:\n${output}`);
      if (output.includes("the admin token:") && (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false))) break;
      if (Date.now() > deadline) throw new Error(`npm start was not ready within 400 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // bash's own variable names: what the examples define beyond them is carried to the next.
    writeFileSync(join(work, "baseline"), spawnSync("bash", ["-c", "compgen -v"], { env, encoding: "utf8" }).stdout);
  }, 410_000);

  afterAll(async () => {
    if (server?.pid && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      process.kill(-server.pid, "SIGTERM");
      await exited;
    }
    for (const dir of [dataDir, work]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("npm start says what it does, then where everything is", async () => {
    expect(output).toMatch(/\[build\] the service \(TypeScript, tsc\): (up to date|done in)/);
    expect(output).toMatch(/\[build\] the console and the GraphQL explorer \(vite\): (up to date|done in)/);
    expect(output).toContain(`tokens for the admin and the compute service are in ${dataDir}/tokens.json`);
    const origin = `http://127.0.0.1:${port}`;
    const block = output.slice(output.indexOf("cyborg-es is serving:"));
    expect(block.split("\n").slice(0, 6).join("\n")).toBe(
      [
        "cyborg-es is serving:",
        `  API       ${origin}/graphql   (GraphQL; the Cyborg v2 REST API at ${origin}/v2)`,
        `  console   ${origin}/console`,
        `  explorer  ${origin}/graphql   (in a browser)`,
        `  metrics   ${origin}/metrics   (with the admin token)`,
        `  the admin token: jq -r '.tokens[0].token' ${dataDir}/tokens.json`,
      ].join("\n"),
    );
    // The printed command prints the admin token, and each URL answers as the block says.
    const command = block.split("\n")[5]!.replace("  the admin token: ", "");
    const admin = spawnSync("bash", ["-c", command], { encoding: "utf8" }).stdout.trim();
    expect(admin).toBe(JSON.parse(readFileSync(join(dataDir, "tokens.json"), "utf8")).tokens[0].token);
    expect((await fetch(`${origin}/console`, { redirect: "follow" })).status).toBe(200);
    expect(await (await fetch(`${origin}/graphql`, { headers: { accept: "text/html" } })).text()).toContain("<html");
    expect((await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).status).toBe(200);
    expect((await fetch(`${origin}/v2`)).status).toBe(200);
    // The console's sign-in page and the explorer learn the same command from the service.
    expect(await (await fetch(`${origin}/console/config.json`)).json()).toEqual({ adminTokenCommand: command });
  });

  it("every markdown file with shell examples is in the runner's order, and every command block is tagged", () => {
    expect(unordered(".")).toEqual([]);
    expect(untaggedCommands(".")).toEqual([]);
    // The few that cannot run here say why; the rest run.
    expect(examples.filter((e) => !e.skip).length).toBeGreaterThan(examples.filter((e) => e.skip).length);
  });

  for (const example of examples) {
    it.skipIf(example.skip !== undefined)(nameOf(example), () => {
      const r = spawnSync("bash", ["-c", scriptFor(example, join(work, "state"), join(work, "baseline"))], { env, encoding: "utf8", timeout: 120_000, killSignal: "SIGTERM" });
      const out = r.stdout;
      expect(r.status, `${example.file}:${example.line} exited with ${r.status}${r.signal ? ` (${r.signal})` : ""}\n--- stdout\n${out}\n--- stderr\n${r.stderr}`).toBe(0);
      expect(out, r.stderr).not.toContain('"errors"');
      checks(example, out);
    }, 130_000);
  }

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
      expect(existsSync(path!), path).toBe(true);
    }
  });
});
