/** bench:api --profile's split of a CPU profile by stage: the innermost claimed frame decides. */
import { describe, expect, it } from "vitest";
import { processStageTimes, stageTimes, type CpuProfile } from "../../bench/lib/cpu-stages.js";

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });

// root -> http handler -> graphql execute -> app -> projection -> JSON.parse (and the chain's digest); idle and GC.
const profile: CpuProfile = {
  nodes: [
    frame(1, "(root)", "", [2, 7, 8, 10]),
    frame(2, "emit", "node:_http_server", [3]),
    frame(3, "execute", "file:///x/node_modules/graphql/execution/execute.js", [4]),
    frame(4, "createArqs", "file:///x/dist/src/app/arqs/create.js", [5, 9]),
    frame(5, "project", "file:///x/dist/projections/arqs/projection.js", [6]),
    frame(6, "parse", "", []),
    frame(7, "(idle)", "", []),
    frame(8, "(garbage collector)", "", []),
    frame(9, "digest", "file:///x/dist/src/infra/eventstore/chain.js", []),
    // LMDB's own code is charged to its caller: here the audit index on disk.
    frame(10, "zadd", "file:///x/dist/src/infra/readstore/lmdb-sorted-sets.js", [11]),
    frame(11, "finishTxn", "file:///x/node_modules/lmdb/write.js", []),
  ],
  samples: [6, 6, 4, 3, 2, 7, 8, 9, 1, 11],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 5000, 1000, 1000, 1000, 1000],
};

describe("stageTimes", () => {
  it("charges each busy sample to the innermost stage on its stack, leaving idle out", () => {
    const { stages, busyMs } = stageTimes(profile);
    expect(busyMs).toBe(9);
    expect(Object.fromEntries(stages.map((s) => [s.stage, s.ms]))).toEqual({
      "read models (projections)": 2,
      "application and domain": 1,
      "GraphQL execution": 1,
      HTTP: 1,
      "garbage collection": 1,
      "log: hash chain": 1,
      "audit index": 1,
      other: 1,
    });
    expect(stages.at(-1)!.stage).toBe("other");
    expect(stages.reduce((a, s) => a + s.share, 0)).toBeCloseTo(1);
  });

  it("leaves out what came before skipMs (the start-up) and after untilMs (the stop)", () => {
    expect(stageTimes(profile, 3.5, 11.5).busyMs).toBe(3);
    expect(stageTimes(profile, 3.5).busyMs).toBe(6);
  });
});

describe("processStageTimes", () => {
  it("splits the main thread by stage and charges each other thread's busy time to its stage, on the main thread's window", () => {
    const main = { ...profile, startTime: 1_000_000 };
    // A write thread started 2 ms after the main thread: busy 1 ms at 3-4 and 1 ms at 11-12 (main's clock), idle between.
    const thread: CpuProfile = {
      nodes: [frame(1, "(root)", "", [2, 3]), frame(2, "zadd", "file:///x/dist/src/infra/readstore/lmdb-sorted-sets.js"), frame(3, "(idle)", "")],
      samples: [3, 2, 3, 2],
      timeDeltas: [1000, 1000, 7000, 1000],
      startTime: 1_002_000,
    };
    const all = processStageTimes([thread, main], "audit index: its write thread");
    expect(all.busyMs).toBe(11);
    expect(Object.fromEntries(all.stages.map((s) => [s.stage, s.ms]))).toMatchObject({ "audit index: its write thread": 2, "audit index": 1, "read models (projections)": 2 });
    expect(all.stages.reduce((a, s) => a + s.share, 0)).toBeCloseTo(1);
    // The main thread's window 3.5-11.5 ms holds the thread's first sample (at 4) but not its last (at 12).
    const window = processStageTimes([main, thread], "t", 3.5, 11.5);
    expect(window.busyMs).toBe(4);
    expect(window.stages.find((s) => s.stage === "t")?.ms).toBe(1);
  });
});
