import { randomUUID } from "node:crypto";
import { describe, it } from "vitest";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { CHECKPOINT_INTERVAL, retentionScenario } from "../support/esdb-retention.js";
import { eventStoreContract } from "./contract.js";

const url = process.env.EVENTSTORE_URL;

if (url) {
  // The server is shared by every test: the contract works in a fresh namespace per test.
  eventStoreContract(
    "esdb",
    async () => {
      const store = EsdbEventStore.connect(url);
      return { store, cleanup: () => store.close() };
    },
    { strictEventIds: false },
  );
  // And in a namespace of its own per test, as deployments sharing the server run.
  eventStoreContract(
    "esdb (namespace)",
    async () => {
      const store = EsdbEventStore.connect(url, { namespace: `contract-${randomUUID()}` });
      return { store, cleanup: () => store.close() };
    },
    { strictEventIds: false },
  );
  // Retention with the server's own delete and $tb, in a namespace of its own.
  describe("retention on EventStoreDB", () => {
    it("archives ended streams and hosts' closed periods; audit reads and verifies archive and live log together", async () => {
      const store = EsdbEventStore.connect(url, { namespace: `retention-${randomUUID()}`, checkpointInterval: CHECKPOINT_INTERVAL });
      try {
        await retentionScenario(store, { allSkipsRemoved: false });
      } finally {
        await store.close();
      }
    });
  });
} else {
  console.warn("esdb contract skipped: set EVENTSTORE_URL=esdb://localhost:2113?tls=false (docker compose up eventstore)");
  describe.skip("EventStore contract: esdb (needs EVENTSTORE_URL)", () => {
    it("runs the shared contract against EventStoreDB", () => undefined);
  });
}
