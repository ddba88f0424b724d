/** bench:api and bench:osacc --profile: a stopped server's profiles read back and its CPU split, the profiler's own left out. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { UNPROFILED, type CpuProfile } from "../../bench/lib/cpu-stages.js";
import { splitProfiledCpu } from "../../bench/lib/server-profile.js";

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });

describe("splitProfiledCpu", () => {
  it("splits the server's CPU without the profiler's threads, and removes a directory it was not asked to keep", () => {
    const dir = mkdtempSync(join(tmpdir(), "server-profile-"));
    // The main thread: 4 busy ms, half in the application, half in HTTP.
    const main: CpuProfile = {
      nodes: [frame(1, "(root)", "", [2, 3]), frame(2, "createArqs", "file:///x/dist/src/app/arqs/create.js"), frame(3, "emit", "node:_http_server")],
      samples: [2, 2, 3, 3],
      timeDeltas: [1000, 1000, 1000, 1000],
      startTime: 0,
    };
    writeFileSync(join(dir, "CPU.1.001.cpuprofile"), JSON.stringify(main));
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      // 2 flows: the process 20 ms, of which the profiler's threads 6 and the main thread 8.
      const split = splitProfiledCpu({ dir, keep: false }, { skipMs: 0, untilMs: Infinity }, { units: 2, allMs: 20, mainMs: 8, profilerMs: 6 }, "flow");
      expect(Object.fromEntries(split.map((s) => [s.stage, [s.usPerFlow, s.pct]]))).toEqual({
        [UNPROFILED]: [3000, 42.9],
        "application and domain": [2000, 28.6],
        HTTP: [2000, 28.6],
      });
      expect(existsSync(dir)).toBe(false);
    } finally {
      stderr.mockRestore();
    }
  });

  it("says so when the server wrote no profile", () => {
    const dir = mkdtempSync(join(tmpdir(), "server-profile-"));
    try {
      expect(() => splitProfiledCpu({ dir, keep: true }, { skipMs: 0, untilMs: Infinity }, { units: 1, allMs: 1, mainMs: 1, profilerMs: 0 }, "flow")).toThrow(/wrote no CPU profile/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
