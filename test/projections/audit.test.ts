import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { project } from "../../projections/audit/projection.js";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import { LmdbReadStore } from "../../src/infra/readstore/lmdb.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { SplitReadStore } from "../../src/infra/readstore/split.js";
import { objectsOf, OWN_PREFIXES, OWN_STREAMS } from "../../projections/audit/objects.js";
import { objectHistory, requestTrace } from "../../projections/audit/queries.js";
import { allocated, arqCreated, bindStarted, bound, given, gpuHost, meta, released, unbound } from "./support.js";

describe("audit projection", () => {
  const events = [
    ...gpuHost("h1", "1"),
    arqCreated("a1"),
    bindStarted("a1", "h1", "inst-1"),
    allocated("h1", "d1", "p1", "h1", "a1", "inst-1"),
    bound("a1", { host: "h1", instance: "inst-1", dep: "p1", handle: "h1" }),
    unbound("a1", { host: "h1", instance: "inst-1", handle: "h1" }),
    released("h1", "p1", "h1", "a1"),
  ];

  it("indexes every event under the objects it names, but those in the object's own stream, in log order, with where to read it", async () => {
    const { store, es } = await given(events);
    const log = await es.readAll();
    // The ARQ's own events are in arq-a1, which history reads whole: only the others are indexed.
    const arq = await objectHistory(store, "a1", 100);
    expect(arq.refs.map((r) => log[Number(r.position) - 1]!.type)).toEqual(["AttachHandleAllocated", "AttachHandleReleased"]);
    expect(arq.refs[0]).toEqual({ position: log[8]!.position, revision: log[8]!.revision, stream: "host-h1" });
    expect(arq.totalCount).toBe(2);
    expect((await objectHistory(store, "inst-1", 100)).refs.map((r) => log[Number(r.position) - 1]!.type)).toEqual(["ArqBindStarted", "AttachHandleAllocated", "ArqBound", "ArqUnbound"]);
  });

  it("ids and correlation ids of any length are indexed, also in a store whose keys are short (LMDB: about 1.9 KB)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cyborg-es-audit-lmdb-"));
    const index = await LmdbReadStore.open(dir);
    // As the embedded mode keeps them: the audit index in LMDB, every other model in memory.
    const store = new SplitReadStore(new MemoryReadStore(), new Map([["audit", index]]));
    try {
      // Only an imported log can hold such ids: the API keeps them short.
      const instance = `inst-${"i".repeat(3000)}`;
      const { es } = await given([...gpuHost("h1", "1"), arqCreated("a1"), bindStarted("a1", "h1", instance)], store);
      const log = await es.readAll();
      expect((await objectHistory(store, instance, 100)).refs.map((r) => log[Number(r.position) - 1]!.type)).toEqual(["ArqBindStarted"]);
      const request = `req-${"r".repeat(3000)}`;
      const e: RecordedEvent = { ...log.at(-1)!, position: log.at(-1)!.position + 1n, metadata: { ...meta(), correlationId: request } };
      await store.applyBatch("audit", project(e), e.position);
      expect((await requestTrace(store, request, 10)).refs).toEqual([{ position: e.position, revision: e.revision, stream: e.stream }]);
      expect((await requestTrace(store, `req-${"r".repeat(2999)}`, 10)).refs).toEqual([]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a device's history holds its deployables' and handles' events, each once, and pages by position", async () => {
    const { store } = await given(events);
    const all = await objectHistory(store, "d1", 100);
    // Discovered, deployable, three attributes, the handle added, allocated, named by ArqBound and
    // ArqUnbound, released (the last four name the handle, not the device).
    expect(all.refs).toHaveLength(10);
    expect(all.totalCount).toBe(10);
    const first = await objectHistory(store, "d1", 3);
    const rest = await objectHistory(store, "d1", 100, first.refs.at(-1)!.position);
    expect(first.hasNextPage).toBe(true);
    expect(rest.hasNextPage).toBe(false);
    expect([...first.refs, ...rest.refs]).toEqual(all.refs);
  });

  it("leaves out the object whose own stream holds the event, and only that one", () => {
    expect(OWN_STREAMS.map((own) => own("x1"))).toEqual(OWN_PREFIXES.map((p) => `${p}x1`));
    const bound = { type: "ArqBound", data: { arqUuid: "a1", instanceUuid: "a1-2", attachHandleUuid: "h1" } };
    expect(objectsOf({ ...bound, stream: "arq-a1" })).toEqual(["a1-2", "h1"]);
    expect(objectsOf({ ...bound, stream: "arq-a1-2" })).toEqual(["a1", "h1"]);
    expect(objectsOf({ ...bound, stream: "instance-a1-2" })).toEqual(["a1", "h1"]);
    expect(objectsOf({ ...bound, stream: "host-a1" })).toEqual(["a1", "a1-2", "h1"]);
    expect(objectsOf({ type: "InstanceArqsBound", stream: "instance-i1", data: { instanceUuid: "i1", arqUuids: ["a1", "a1", "i1"] } })).toEqual(["a1"]);
  });

  it("indexes every event under its request", async () => {
    const { store } = await given(events);
    // support.ts gives every event the correlation id "c".
    expect((await requestTrace(store, "c", 1000)).totalCount).toBe(events.length);
    expect((await requestTrace(store, "other", 10)).refs).toEqual([]);
  });
});
