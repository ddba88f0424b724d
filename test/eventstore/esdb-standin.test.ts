import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";
import { eventStoreContract } from "./contract.js";

// The contract on the EventStoreDB adapter, against the stand-in of the server (one per test).
eventStoreContract(
  "esdb (stand-in)",
  async () => {
    const store = new EsdbEventStore(new EsdbStandIn().connect());
    return { store, cleanup: () => store.close() };
  },
  { strictEventIds: false },
);

// The same in a namespace, on a server shared with another namespace and the default one.
eventStoreContract(
  "esdb (stand-in, namespace)",
  async () => {
    const server = new EsdbStandIn();
    const store = new EsdbEventStore(server.connect(), { namespace: "cyborg-a" });
    return { store, cleanup: () => store.close() };
  },
  { strictEventIds: false },
);
