import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { loadAggregate } from "../../src/app/handle.js";
import { StreamLocks } from "../../src/app/stream-locks.js";
import { hostDecider } from "../../src/domain/inventory/decider.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { ADMIN, ctx, fpga } from "./support.js";

const tick = () => new Promise((r) => setImmediate(r));

describe("one writer per stream in a process", () => {
  it("runs holders of one stream one after the other, in arrival order, and others alongside", async () => {
    const locks = new StreamLocks();
    const log: string[] = [];
    const hold = (name: string, streams: string[]) =>
      locks.run(streams, async () => {
        log.push(`${name}+`);
        await tick();
        await tick();
        log.push(`${name}-`);
      });
    await Promise.all([hold("a", ["host-1"]), hold("b", ["host-1"]), hold("c", ["host-2"])]);
    expect(log.indexOf("a-")).toBeLessThan(log.indexOf("b+"));
    expect(log.indexOf("c+")).toBeLessThan(log.indexOf("a-"));
  });
  it("never deadlocks holders of several streams, asked in any order", async () => {
    const locks = new StreamLocks();
    let inside = 0;
    let most = 0;
    const run = (streams: string[]) =>
      locks.run(streams, async () => {
        inside++;
        most = Math.max(most, inside);
        await tick();
        inside--;
      });
    await Promise.all(Array.from({ length: 50 }, (_, i) => run(i % 2 ? ["host-1", "arq-1", "instance-1"] : ["instance-1", "host-1", "arq-1"])));
    expect(most).toBe(1);
  });
  it("releases a lock when its holder throws", async () => {
    const locks = new StreamLocks();
    await expect(locks.run(["s"], async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(locks.run(["s"], async () => 42)).resolves.toBe(42);
  });
});

describe("many binds and releases on one host at once", () => {
  it("all succeed on the durable store: none gives up on revision conflicts", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cyborg-es-locks-"));
    const store = await LmdbEventStore.open(dir);
    const app = new Application({ store });
    const host = "compute1";
    const buses = ["a0", "a1", "a2", "a3", "a4", "a5"];
    await app.reportHostInventory({ ...ADMIN, principal: "agent:compute1" }, host, buses.map((b) => fpga(host, b, 8)));
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
    const nova = ctx({ isAdmin: true });
    const cycles = await Promise.allSettled(
      Array.from({ length: 48 }, async (_, i) => {
        const [arq] = await app.createArqs(nova, { deviceProfileName: "dp1" });
        const rp = rpUuidFor(`${host}_0000:${buses[i % buses.length]}:00.0`);
        const [bound] = await app.startBinds(nova, [{ arqUuid: arq!.uuid, hostname: host, deviceRpUuid: rp, instanceUuid: `vm-${i}` }], { allocate: true });
        if (bound!.state !== "BOUND") throw new Error(`not bound: ${bound!.state}`);
        await app.deleteArqs(nova, { instanceUuid: `vm-${i}` });
      }),
    );
    try {
      expect(cycles.filter((c) => c.status === "rejected")).toEqual([]);
      expect((await loadAggregate(store, stream.host(host), hostDecider)).state.allocations.size).toBe(0);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
