/** Retention on EventStoreDB (its stand-in): ended streams deleted, hosts' closed periods cut with `$tb`, audit over archive and live log. */
import { describe, expect, it } from "vitest";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";
import { CHECKPOINT_INTERVAL, esdbHistory, retentionScenario } from "../support/esdb-retention.js";

const record = (seq: number, events: number, sha256 = "0") => ({ seq, file: "x", sha256, events, streams: 1, first: "1", last: "1", previous: "0", at: "" });

describe("retention on EventStoreDB", () => {
  it("archives ended streams and hosts' closed periods; audit reads and verifies archive and live log together", async () => {
    const store = new EsdbEventStore(new EsdbStandIn().connect(), { checkpointInterval: CHECKPOINT_INTERVAL });
    try {
      await retentionScenario(store, { allSkipsRemoved: true });
    } finally {
      await store.close();
    }
  });

  it("works in a namespace: the server's streams under its prefix are deleted and truncated", async () => {
    const server = new EsdbStandIn();
    const store = new EsdbEventStore(server.connect(), { namespace: "cyborg-a", checkpointInterval: CHECKPOINT_INTERVAL });
    try {
      await retentionScenario(store, { allSkipsRemoved: true });
      expect(server.log.stream("$$@cyborg-a/host-compute1")?.at(-1)?.type).toBe("$metadata");
    } finally {
      await store.close();
    }
  });

  it("refuses, before writing anything, a removal whose stream moved on, or whose events the newest checkpoint does not cover", async () => {
    const server = new EsdbStandIn();
    const store = new EsdbEventStore(server.connect(), { checkpointInterval: 1_000_000 });
    try {
      const [uuid] = await esdbHistory(store, 1, false);
      const arq = `arq-${uuid}`;
      const last = (await store.readStream(arq)).at(-1)!.revision;
      await expect(store.archiving.removeStreams([{ stream: arq, revision: last - 1 }], record(1, last))).rejects.toThrow(/not \d+ as archived/);
      await expect(store.archiving.removeStreams([{ stream: arq, revision: last }], record(1, last + 1))).rejects.toThrow(/newest checkpoint/);
      expect(await store.readStream(arq)).toHaveLength(last + 1);
      expect(await store.archiving.readArchiveSegments()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("refuses a segment another run recorded the number of", async () => {
    const store = new EsdbEventStore(new EsdbStandIn().connect(), { checkpointInterval: CHECKPOINT_INTERVAL });
    try {
      await store.archiving.removeStreams([], record(1, 0, "a"));
      // The same record again is a retry and takes effect once; another one under its number is refused.
      await store.archiving.removeStreams([], record(1, 0, "a"));
      await expect(store.archiving.removeStreams([], record(1, 0, "b"))).rejects.toThrow(/not the next one/);
      expect(await store.archiving.readArchiveSegments()).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
