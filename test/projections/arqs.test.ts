import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../src/domain/events.js";
import { arqCreated, arqDeleted, bindFailed, bindStarted, bound, given, T, unbound } from "./support.js";

const PCI = { domain: "0000", bus: "af", device: "00", function: "0" };

describe("arqs projection", () => {
  it("follows an ARQ through create, bind-started and bound; handle fields only when BOUND", async () => {
    const created = await given([arqCreated("a1")]);
    expect((await created.read.getArqs(["a1", "nope"]))).toEqual([
      {
        uuid: "a1",
        state: "INITIAL",
        deviceProfileName: "gpu",
        deviceProfileUuid: "dp-1",
        deviceProfileGroupId: 0,
        deviceProfileVersion: 1,
        group: { "resources:PGPU": "1" },
        hostname: null,
        deviceRpUuid: null,
        instanceUuid: null,
        projectId: "proj-a",
        attachHandleType: null,
        attachHandleUuid: null,
        attachHandleInfo: null,
        deployableUuid: null,
        alternative: null,
        bindFailureReason: null,
        eviction: null,
        revision: 0,
        position: "1",
        createdAt: T(10),
        updatedAt: null,
      },
      null,
    ]);

    const started = await given([arqCreated("a1"), bindStarted("a1")]);
    expect((await started.read.getArqs(["a1"]))[0]).toMatchObject({
      state: "BIND_STARTED",
      hostname: "h1",
      deviceRpUuid: "rp-p1",
      instanceUuid: "inst-1",
      attachHandleUuid: null,
      revision: 1,
      position: "2",
      updatedAt: T(11),
    });

    const done = await given([arqCreated("a1"), bindStarted("a1"), bound("a1")]);
    expect((await done.read.getArqs(["a1"]))[0]).toMatchObject({
      state: "BOUND",
      attachHandleType: "PCI",
      attachHandleUuid: "h1",
      attachHandleInfo: PCI,
      deployableUuid: "p1",
      alternative: null,
      revision: 2,
    });
  });

  it("clears the binding on unbind but keeps the project; shows why a bind failed", async () => {
    const { read } = await given([
      arqCreated("a1"),
      bindStarted("a1"),
      bound("a1"),
      unbound("a1"),
      arqCreated("a2"),
      bindStarted("a2", "h2", "inst-2"),
      bindFailed("a2", "no free attach handle", "inst-2"),
      arqCreated("a3"),
      bindStarted("a3"),
      bound("a3"),
      bindFailed("a3", "device lost"),
    ]);
    const [a1, a2, a3] = await read.getArqs(["a1", "a2", "a3"]);
    expect(a1).toMatchObject({ state: "UNBOUND", hostname: null, deviceRpUuid: null, instanceUuid: null, attachHandleUuid: null, deployableUuid: null, projectId: "proj-a" });
    expect(a2).toMatchObject({ state: "BIND_FAILED", hostname: "h2", instanceUuid: "inst-2", bindFailureReason: "no free attach handle" });
    expect(a3).toMatchObject({ state: "BIND_FAILED", attachHandleUuid: null, attachHandleInfo: null, bindFailureReason: "device lost" });
  });

  describe("lists", () => {
    const log: DomainEvent[] = [
      arqCreated("a1"),
      arqCreated("a2", { profile: "fpga", project: "proj-b" }),
      arqCreated("a3"),
      arqCreated("a4", { project: null }),
      bindStarted("a3", "h1", "inst-1"),
      bound("a3"),
      bindStarted("a1", "h2", "inst-1"),
      bindStarted("a2", "h2", "inst-2"),
      bindFailed("a2", "x", "inst-2"),
    ];

    it("filters by instance, state, host, profile, project and resolution, in creation order", async () => {
      const { read } = await given(log);
      const uuids = async (filter: object) => (await read.listArqs(filter, 100)).items.map((a) => a.uuid);
      expect(await uuids({})).toEqual(["a1", "a2", "a3", "a4"]);
      expect(await uuids({ instanceUuid: "inst-1" })).toEqual(["a1", "a3"]);
      expect(await uuids({ state: "BIND_STARTED" })).toEqual(["a1"]);
      expect(await uuids({ state: "INITIAL" })).toEqual(["a4"]);
      expect(await uuids({ hostname: "h2" })).toEqual(["a1", "a2"]);
      expect(await uuids({ deviceProfileName: "fpga" })).toEqual(["a2"]);
      // bind-started set the project to the binder's (proj-a)
      expect(await uuids({ projectId: "proj-a" })).toEqual(["a1", "a2", "a3"]);
      expect(await uuids({ resolvedOnly: true })).toEqual(["a2", "a3"]);
      expect(await uuids({ instanceUuid: "inst-1", resolvedOnly: true })).toEqual(["a3"]);
      expect(await uuids({ instanceUuid: "inst-1", state: "BOUND", hostname: "h1" })).toEqual(["a3"]);
      expect(await uuids({ instanceUuid: "inst-9" })).toEqual([]);
    });

    it("pages with totalCount", async () => {
      const { read } = await given(log);
      const p1 = await read.listArqs({}, 2);
      expect(p1).toMatchObject({ totalCount: 4, hasNextPage: true });
      const p2 = await read.listArqs({}, 2, p1.cursors[1]);
      expect(p2.items.map((a) => a.uuid)).toEqual(["a3", "a4"]);
      expect(p2.hasNextPage).toBe(false);
      const f1 = await read.listArqs({ projectId: "proj-a" }, 1);
      const f2 = await read.listArqs({ projectId: "proj-a" }, 5, f1.cursors[0]);
      expect([...f1.items, ...f2.items].map((a) => a.uuid)).toEqual(["a1", "a2", "a3"]);
      expect(f2.totalCount).toBe(3);
    });

    it("moves ARQs between lists as they change, and forgets deleted ones everywhere", async () => {
      const { read, store } = await given([
        ...log,
        unbound("a3"),
        arqDeleted("a2", { host: "h2", instance: "inst-2" }),
        arqDeleted("a4"),
      ]);
      const uuids = async (filter: object) => (await read.listArqs(filter, 100)).items.map((a) => a.uuid);
      expect(await uuids({ instanceUuid: "inst-1" })).toEqual(["a1"]);
      expect(await uuids({ state: "UNBOUND" })).toEqual(["a3"]);
      expect(await uuids({ resolvedOnly: true })).toEqual([]);
      expect(await uuids({})).toEqual(["a1", "a3"]);
      expect(await uuids({ projectId: "proj-a" })).toEqual(["a1", "a3"]);
      const leftovers = Object.keys((await store.dump("arqs")).keys).filter((k) => /a2|a4|fpga|proj-b|inst-2/.test(k));
      expect(leftovers).toEqual([]);
    });
  });
});
