/**
 * A clean stop of `cyborg-es serve` that takes longer than SHUTDOWN_TIMEOUT_S exits anyway, and
 * says why: here a request whose body never finishes keeps the HTTP server draining (it gives such
 * connections 5 s), longer than the 1 s allowed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/redis-server.js";
import { buildCli, type BuiltCli } from "../support/cli.js";
import { untilReady } from "../support/until-ready.js";

let built: BuiltCli;
const dirs: string[] = [];

beforeAll(async () => {
  built = await buildCli();
}, 60_000);

afterAll(async () => {
  await built?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Starts serve, leaves one request half sent, stops it: its exit code, how long the stop took, and what it wrote. */
async function stopWithARequestHalfSent(env: Record<string, string>): Promise<{ code: number | null; ms: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "cyborg-es-shutdown-"));
  dirs.push(dir);
  const port = await freePort();
  const server = spawn(process.execPath, [built.cli, "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: join(dir, "data"), LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  server.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  server.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  await untilReady(server, port, () => output);
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((r) => socket.once("connect", () => r()));
  socket.on("error", () => undefined);
  socket.write("POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{");
  await new Promise((r) => setTimeout(r, 200));
  const exited = new Promise<number | null>((r) => server.once("exit", (code) => r(code)));
  const t0 = Date.now();
  server.kill("SIGTERM");
  const code = await exited;
  socket.destroy();
  return { code, ms: Date.now() - t0, output };
}

describe("cyborg-es serve's stop", () => {
  it("exits after SHUTDOWN_TIMEOUT_S with an error that says what is left, where the stop would take longer", async () => {
    const { code, output } = await stopWithARequestHalfSent({ SHUTDOWN_TIMEOUT_S: "1" });
    expect(code).toBe(1);
    const line = output.split("\n").find((l) => l.includes("SHUTDOWN_TIMEOUT_S"));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 50, shutdownTimeoutS: 1 });
    expect(output).not.toContain('"msg":"stopped"');
  }, 90_000);

  it("by default waits for the drain to end (the HTTP server closes a request still open after 5 s) and stops cleanly", async () => {
    const { code, ms, output } = await stopWithARequestHalfSent({});
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(4_500);
    expect(output).toContain('"msg":"stopped"');
    expect(output).not.toContain("SHUTDOWN_TIMEOUT_S");
  }, 90_000);
});
