/** Waits until a spawned `cyborg-es serve` answers /readyz; fails with what it wrote if it exits or takes a minute. */
import type { ChildProcess } from "node:child_process";

export async function untilReady(server: ChildProcess, port: number, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false))) {
    if (server.exitCode !== null) throw new Error(`serve exited with ${server.exitCode}:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`serve was not ready within 60 s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
