/** bench --profile's split of a CPU profile by stage: the innermost claimed frame decides. */
import { describe, expect, it } from "vitest";
import { flowCostByStage, stageTimes, UNPROFILED, type CpuProfile } from "../../bench/lib/cpu-stages.js";

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

  it("charges the REST API's own code to it, not to GraphQL's execution, and what it calls to the stage called", () => {
    const rest: CpuProfile = {
      nodes: [
        frame(1, "(root)", "", [2]),
        frame(2, "answer", "file:///x/dist/src/api/rest/router.js", [3]),
        frame(3, "patchArqs", "file:///x/dist/src/api/rest/accelerator-requests.js", [4]),
        frame(4, "startBinds", "file:///x/dist/src/app/arqs/bind.js", []),
      ],
      samples: [2, 3, 4],
      timeDeltas: [1000, 1000, 1000],
    };
    const { stages } = stageTimes(rest);
    expect(Object.fromEntries(stages.map((s) => [s.stage, s.ms]))).toEqual({ "REST API": 2, "application and domain": 1 });
  });

  it("leaves out what came before skipMs (the start-up) and after untilMs (the stop)", () => {
    expect(stageTimes(profile, 3.5, 11.5).busyMs).toBe(3);
    expect(stageTimes(profile, 3.5).busyMs).toBe(6);
  });
});

describe("flowCostByStage", () => {
  it("splits the main thread's CPU by its stages, charges each other profiled thread its busy time, and keeps what no profile sees apart", () => {
    const main = { ...profile, startTime: 1_000_000 };
    // A write thread started 2 ms after the main thread: busy 1 ms at 3-4 and 1 ms at 11-12 (main's clock), idle between.
    const thread: CpuProfile = {
      nodes: [frame(1, "(root)", "", [2, 3]), frame(2, "zadd", "file:///x/dist/src/infra/readstore/lmdb-sorted-sets.js"), frame(3, "(idle)", "")],
      samples: [3, 2, 3, 2],
      timeDeltas: [1000, 1000, 7000, 1000],
      startTime: 1_002_000,
    };
    const us = (costs: Array<{ stage: string; usPerFlow: number }>) => Object.fromEntries(costs.map((c) => [c.stage, c.usPerFlow]));
    // The main thread's 18 ms of CPU over 2 flows split by its 9 busy samples; the thread's 2 ms; 10 ms the profiles do not see.
    const all = flowCostByStage([thread, main], "audit index: its write thread", { skipMs: 0, untilMs: Infinity }, { flows: 2, mainMs: 18, allMs: 30 });
    expect(us(all)).toEqual({
      [UNPROFILED]: 5000,
      "read models (projections)": 2000,
      "application and domain": 1000,
      "GraphQL execution": 1000,
      HTTP: 1000,
      "garbage collection": 1000,
      "log: hash chain": 1000,
      "audit index": 1000,
      "audit index: its write thread": 1000,
      other: 1000,
    });
    expect([all[0]!.stage, all.at(-1)!.stage, all.reduce((a, c) => a + c.usPerFlow, 0)]).toEqual([UNPROFILED, "other", 15_000]);
    // The main thread's window 3.5-11.5 ms holds the thread's first sample (at 4) but not its last (at 12).
    const window = flowCostByStage([main, thread], "t", { skipMs: 3.5, untilMs: 11.5 }, { flows: 1, mainMs: 6, allMs: 10 });
    expect(us(window)).toEqual({ "GraphQL execution": 2000, HTTP: 2000, "garbage collection": 2000, t: 1000, [UNPROFILED]: 3000 });
    // /proc read a little less than the profiles hold: nothing is left for the threads they do not see.
    expect(us(flowCostByStage([main, thread], "t", { skipMs: 3.5, untilMs: 11.5 }, { flows: 1, mainMs: 6, allMs: 5 }))[UNPROFILED]).toBe(0);
  });
});
