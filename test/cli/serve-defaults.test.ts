/**
 * `cyborg-es serve` as an operator starts it: what it writes under DATA_DIR is readable by the
 * service's user only, and REST_AUTH=noauth is announced as the development setting it is.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/redis-server.js";
import { buildCli, type BuiltCli } from "../support/cli.js";
import { untilReady } from "../support/until-ready.js";

let built: BuiltCli;
let dataDir: string;
let output = "";

/** Every file and folder under `dir`, with its permission bits. */
function modes(dir: string): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    out.push([path, statSync(path).mode & 0o777]);
    if (entry.isDirectory()) out.push(...modes(path));
  }
  return out;
}

beforeAll(async () => {
  built = await buildCli();
  dataDir = join(mkdtempSync(join(tmpdir(), "cyborg-es-serve-")), "data");
  const port = await freePort();
  // The shell's own umask is the usual one: group and others may read what it creates.
  const server: ChildProcess = spawn("sh", ["-c", `umask 022 && exec "${process.execPath}" "${built.cli}" serve`], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, REST_AUTH: "noauth", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  server.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  await untilReady(server, port, () => output);
  const exited = new Promise((r) => server.once("exit", r));
  server.kill("SIGTERM");
  await exited;
}, 120_000);

afterAll(async () => {
  await built?.remove();
  if (dataDir) rmSync(join(dataDir, ".."), { recursive: true, force: true });
});

describe("cyborg-es serve", () => {
  it("creates the log, the read models on disk and the token file readable by its user only", () => {
    const all = modes(dataDir);
    expect(all.map(([p]) => p.slice(dataDir.length + 1))).toEqual(expect.arrayContaining(["tokens.json", "events"]));
    expect(all.filter(([, mode]) => (mode & 0o077) !== 0)).toEqual([]);
    expect(statSync(dataDir).mode & 0o077).toBe(0);
  });

  it("makes tokens that are one plain word: no option-like leading dash for the openstack CLI, nothing a shell quotes", () => {
    const { tokens } = JSON.parse(readFileSync(join(dataDir, "tokens.json"), "utf8")) as { tokens: Array<{ token: string }> };
    expect(tokens.map((t) => t.token)).toEqual([expect.stringMatching(/^[0-9a-f]{48}$/), expect.stringMatching(/^[0-9a-f]{48}$/)]);
  });

  it("warns at start that REST_AUTH=noauth takes every REST request as an admin's", () => {
    const warning = output.split("\n").find((l) => l.includes("REST_AUTH=noauth"));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, host: "127.0.0.1" });
  });
});
