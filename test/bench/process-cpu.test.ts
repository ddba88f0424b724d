/**
 * The CPU time bench scripts read from /proc: a process's (every thread), one thread's (the main
 * thread by default) and that of the threads with a name, in seconds.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { namedThreadsCpuSeconds, processCpuSeconds, threadCpuSeconds } from "../../bench/lib/process-cpu.js";

/** Keeps this thread on a core until it has used `ms` more CPU time. */
function spin(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe.runIf(existsSync("/proc/self/task"))("process and thread CPU time from /proc", () => {
  it("counts the main thread's work in its own time and in the process's", () => {
    const thread0 = threadCpuSeconds(process.pid)!;
    const process0 = processCpuSeconds(process.pid)!;
    spin(300);
    // The kernel counts in clock ticks (10 ms): 300 ms of work shows as at least 0.2 s.
    expect(threadCpuSeconds(process.pid)! - thread0).toBeGreaterThanOrEqual(0.2);
    expect(processCpuSeconds(process.pid)! - process0).toBeGreaterThanOrEqual(0.2);
  });

  it("sums the threads with a name: the main thread's work counts under its name, none under another", () => {
    const name = readFileSync(`/proc/${process.pid}/task/${process.pid}/comm`, "utf8").trim();
    const named0 = namedThreadsCpuSeconds(process.pid, name)!;
    spin(300);
    expect(namedThreadsCpuSeconds(process.pid, name)! - named0).toBeGreaterThanOrEqual(0.2);
    expect(namedThreadsCpuSeconds(process.pid, "no thread has this name")).toBe(0);
  });

  it("answers null for a thread or process that is not there", () => {
    expect(threadCpuSeconds(process.pid, 2 ** 30)).toBeNull();
    expect(processCpuSeconds(2 ** 30)).toBeNull();
    expect(namedThreadsCpuSeconds(2 ** 30, "node")).toBeNull();
  });
});
