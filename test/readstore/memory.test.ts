import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { readStoreContract } from "./contract.js";

readStoreContract("memory", async () => {
  const store = new MemoryReadStore();
  const harness = {
    store,
    async reset() {
      store.flushAll();
    },
    async close() {},
  };
  return harness;
});
