import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { eventStoreContract } from "./contract.js";

eventStoreContract(
  "memory",
  async () => {
    const store = new MemoryEventStore({ checkpointInterval: 4 });
    return { store, cleanup: () => store.close() };
  },
  { strictEventIds: true, startsEmpty: true, checkpointInterval: 4 },
);
