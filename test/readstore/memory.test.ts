import { MemoryReadStore } from "../../src/readstore/memory.js";
import { readStoreContract } from "./contract.js";

readStoreContract("memory", async () => {
  let store = new MemoryReadStore();
  const harness = {
    get store() {
      return store;
    },
    async reset() {
      store = new MemoryReadStore();
    },
    async close() {},
  };
  return harness;
});
