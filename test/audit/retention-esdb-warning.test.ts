/** RETENTION_DAYS on EventStoreDB (here its stand-in) is not applied by the service: it says so at start, once. */
import { describe, expect, it } from "vitest";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { startTestService } from "../api/harness.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";
import { capturingLogger } from "../support/log-lines.js";

const WARNING = /RETENTION_DAYS is not applied on EventStoreDB/;

describe("retention on EventStoreDB", () => {
  it("warns at start that RETENTION_DAYS is not applied there, and not when it is 0", async () => {
    for (const [days, warned] of [["90", 1], ["0", 0]] as const) {
      const captured = capturingLogger("info");
      const store = new EsdbEventStore(new EsdbStandIn().connect({}), {});
      const t = await startTestService({ env: { RETENTION_DAYS: days }, overrides: { store }, log: captured.log });
      try {
        expect(captured.lines.filter((l) => WARNING.test(l.msg))).toHaveLength(warned);
      } finally {
        await t.close();
      }
    }
  });
});
