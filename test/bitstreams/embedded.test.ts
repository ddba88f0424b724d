import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { AggregateCache } from "../../src/app/aggregate-cache.js";
import { EmbeddedCatalogue } from "../../src/app/bitstreams/embedded-catalogue.js";
import { Streams } from "../../src/app/streams.js";
import { ContentStore } from "../../src/infra/bitstreams/content-store.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { catalogueContract, MAX_BYTES } from "./contract.js";

catalogueContract("embedded (events on the bitstreams stream, content by SHA-256)", async () => {
  const dir = await mkdtemp(join(tmpdir(), "cyborg-es-bitstreams-"));
  const catalogue = new EmbeddedCatalogue(new Streams(new MemoryEventStore(), new AggregateCache()), new ContentStore(dir, MAX_BYTES), randomUUID);
  return {
    catalogue,
    async close() {
      // Nothing half-written is left behind: only content files, named by their SHA-256.
      const left = await readdir(dir);
      if (left.some((f) => !/^[0-9a-f]{64}$/.test(f))) throw new Error(`left in the content directory: ${left.join(", ")}`);
      await rm(dir, { recursive: true, force: true });
    },
  };
});
