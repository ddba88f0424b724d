/** `cyborg-es agent` as a user runs it (test/support/cli-build.ts), its JSON log read line by line. */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { BuiltCli } from "../../support/cli-build.js";

export interface AgentProcess {
  pid: number;
  /** Log lines (pino JSON) so far. */
  lines: Array<Record<string, unknown>>;
  /** Resolves with the first log line (since the start) that `match` accepts. */
  waitFor(match: (line: Record<string, unknown>) => boolean, what: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startAgent(cli: BuiltCli, args: string[]): Promise<AgentProcess> {
  const child: ChildProcess = spawn(cli.argv[0]!, [cli.argv[1]!, "agent", "--log-level", "debug", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = "";
  let waiters: Array<() => void> = [];
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      lines.push({ msg: line });
    }
    const w = waiters;
    waiters = [];
    w.forEach((f) => f());
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.once("exit", () => waiters.forEach((f) => f()));
  const agent: AgentProcess = {
    pid: child.pid!,
    lines,
    async waitFor(match, what, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines.find(match);
        if (found) return found;
        if (child.exitCode !== null) throw new Error(`the agent exited (${child.exitCode}) before ${what}:\n${stderr}\n${lines.map((l) => JSON.stringify(l)).join("\n")}`);
        if (Date.now() > deadline) throw new Error(`the agent did not log ${what} within ${timeoutMs} ms:\n${lines.map((l) => JSON.stringify(l)).join("\n")}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const t = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
  return agent;
}
