/**
 * The real service in a child process (`cyborg-es serve`), for the reliability suite: a data dir
 * and token file that outlive the process, so it can be killed with SIGKILL and started again on
 * the same DATA_DIR. The caller gives the CLI entry point: dist/src/cli/index.js (npm run soak) or
 * the SWC build of test/support/cli.ts (the tests).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../redis-server.js";
import { tokenFileJson } from "./tokens.js";

export interface ServiceProcessOptions {
  cli: string;
  /** Extra environment (REDIS_URL, BIND_TIMEOUT_S, ...). */
  env?: Record<string, string>;
  /** How long a start may take before it is an error (a loaded machine is slow). */
  readyTimeoutMs?: number;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

class PortTaken extends Error {}

export class ServiceProcess {
  readonly dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-reliability-"));
  readonly tokensFile = join(this.dataDir, "reliability-tokens.json");
  private child: ChildProcess | undefined;
  private exit: Promise<Exit> | undefined;
  private killedByUs = false;
  private output = "";
  port = 0;

  constructor(private readonly opts: ServiceProcessOptions) {
    writeFileSync(this.tokensFile, tokenFileJson());
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  get url(): string {
    return `${this.base}/graphql`;
  }
  get pid(): number | undefined {
    return this.child?.pid;
  }
  /** The last lines the process wrote (for a failure message). */
  get tail(): string {
    return this.output.slice(-4000);
  }

  /**
   * Starts the process (on the same port and DATA_DIR as before, if it ran) and waits for /readyz.
   * The port is free when chosen, but another process may take it first: then another is chosen.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce();
      } catch (err) {
        if (!(err instanceof PortTaken) || attempt === 3) throw err;
        this.port = 0;
      }
    }
  }

  private async startOnce(): Promise<void> {
    if (this.running) throw new Error("already running");
    this.port ||= await freePort();
    this.killedByUs = false;
    let startOutput = "";
    // API_WORKERS from the environment runs the suite on API workers (`API_WORKERS=2 npx vitest run
    // test/reliability`); they share the embedded log, so a service given Redis or EventStoreDB runs without.
    const shared = this.opts.env?.REDIS_URL !== undefined || this.opts.env?.EVENTSTORE_URL !== undefined;
    const child = spawn(process.execPath, [this.opts.cli, "serve"], {
      env: {
        ...process.env,
        ...(shared ? { API_WORKERS: "1" } : {}),
        PORT: String(this.port),
        HOST: "127.0.0.1",
        DATA_DIR: this.dataDir,
        AUTH_TOKENS_FILE: this.tokensFile,
        LOG_LEVEL: "warn",
        // The suite judges answers, not fairness (test/api/fairness.test.ts does): its load from
        // member and reader tokens would otherwise meet RATE_LIMITED instead of the code under test.
        RATE_LIMIT_REQUESTS: "0",
        ...this.opts.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (d: Buffer) => {
      const text = d.toString();
      if (startOutput.length < 20_000) startOutput += text;
      this.output = (this.output + text).slice(-20_000);
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    this.child = child;
    this.exit = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    const limit = this.opts.readyTimeoutMs ?? 180_000;
    const deadline = Date.now() + limit;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        await this.exit;
        if (/EADDRINUSE/.test(startOutput)) throw new PortTaken();
        throw new Error(`the service exited (${child.exitCode ?? child.signalCode}) while starting:\n${this.tail}`);
      }
      if (await fetch(`${this.base}/readyz`).then((r) => r.ok, () => false)) return;
      if (Date.now() > deadline) throw new Error(`the service was not ready after ${limit} ms:\n${this.tail}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** True while the process runs. */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The process ended without being told to: a crash. */
  get crashed(): boolean {
    return this.child !== undefined && !this.running && !this.killedByUs;
  }

  /** kill -9, and wait until it is gone. */
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.killedByUs = true;
    this.child!.kill("SIGKILL");
    await this.exit;
  }

  /** SIGTERM (a clean stop), then SIGKILL if it lingers. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.killedByUs = true;
    this.child!.kill("SIGTERM");
    const timer = setTimeout(() => this.child?.kill("SIGKILL"), 20_000);
    await this.exit;
    clearTimeout(timer);
  }

  /** Stops the process and removes the data dir. */
  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** GET /healthz answers 200. */
  async healthy(): Promise<boolean> {
    return fetch(`${this.base}/healthz`).then((r) => r.ok, () => false);
  }
}
