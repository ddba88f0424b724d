/** Retention on EventStoreDB (here its stand-in) in the service: RETENTION_DAYS applies there as on the embedded log. */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Archive } from "../../src/audit/retention/archive.js";
import { RetentionScheduler } from "../../src/audit/retention/scheduler.js";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { startTestService } from "../api/harness.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";
import { CHECKPOINT_INTERVAL, esdbHistory } from "../support/esdb-retention.js";
import { capturingLogger } from "../support/log-lines.js";

describe("retention on EventStoreDB in the service", () => {
  it("starts without saying RETENTION_DAYS is not applied: the store archives", async () => {
    const captured = capturingLogger("info");
    const store = new EsdbEventStore(new EsdbStandIn().connect({}), {});
    const t = await startTestService({ env: { RETENTION_DAYS: "90" }, overrides: { store }, log: captured.log });
    try {
      expect(captured.lines.filter((l) => /not applied/.test(l.msg))).toEqual([]);
      expect(store.archiving).toBeDefined();
    } finally {
      await t.close();
    }
  });

  it("runs as the service schedules it: the ended ARQs leave the live log", async () => {
    const store = new EsdbEventStore(new EsdbStandIn().connect(), { checkpointInterval: CHECKPOINT_INTERVAL });
    try {
      const arqs = await esdbHistory(store, 6);
      const dir = join(await mkdtemp(join(tmpdir(), "cyborg-es-esdb-scheduler-")), "archive");
      const captured = capturingLogger("info");
      const later = new Date(Date.now() + 91 * 86_400_000);
      const scheduler = new RetentionScheduler({ store, archive: new Archive(dir, store.archiving), days: 90, intervalMs: 86_400_000, log: captured.log, now: () => later });
      const r = await scheduler.runOnce();
      expect(r?.events).toBeGreaterThan(0);
      expect(await store.readStream(`arq-${arqs[0]}`)).toEqual([]);
      expect(await store.archiving.readArchiveSegments()).toHaveLength(r!.segments);
    } finally {
      await store.close();
    }
  });
});
