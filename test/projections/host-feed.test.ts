import { describe, expect, it } from "vitest";
import { Projector } from "../../src/reactors/projector/projector.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { projections } from "../../projections/index.js";
import { name as resourceProviders } from "../../projections/resource-providers/projection.js";
import { FleetView, fleetHosts, hostsChangedSince } from "../../projections/resource-providers/queries.js";
import { HostFeed, type HostView } from "../../projections/shared/host-feed.js";
import { allocated, append, attribute, deployable, device, given, gpuHost, handle, T } from "./support.js";

/** A feed of the fleet whose reads are counted, host by host. */
function countedFleet(store: ReadStore) {
  const reads: string[][] = [];
  const feed = new HostFeed(store, {
    models: [resourceProviders],
    changedSince: [hostsChangedSince],
    read: (s: ReadStore, names: readonly string[]) => (reads.push([...names]), fleetHosts(s, names)),
    empty: () => new FleetView(),
  });
  return { feed, read: () => reads.splice(0).flat().sort() };
}

const capacityOf = (view: FleetView, host: string) => view.hosts().flatMap((h) => h.capacity).filter((c) => c.hostname === host).map(({ resourceClass, total, used }) => ({ resourceClass, total, used }));

const fpgaHost = (h: string, n: string) => [
  device(h, `d${n}`, { type: "FPGA" }),
  deployable(h, `d${n}`, `p${n}`, { name: `${h}_0000:5e:00.0`, num: 2 }),
  attribute(h, `p${n}`, `a${n}-rc`, "rc", "FPGA"),
  handle(h, `d${n}`, `p${n}`, `h${n}a`),
  handle(h, `d${n}`, `p${n}`, `h${n}b`),
];

/** Appends the events and brings every model up to them. */
async function project(es: MemoryEventStore, projector: Projector, events: Parameters<typeof append>[1]): Promise<void> {
  await append(es, events);
  await projector.start();
  await projector.caughtUp();
  await projector.stop();
}

describe("a host-feed", () => {
  it("reads every host once, then only the hosts changed since, and drops a host whose providers went", async () => {
    const { store, es, projector } = await given([...fpgaHost("h1", "1"), ...fpgaHost("h2", "2"), ...gpuHost("h3", "3")]);
    const { feed, read } = countedFleet(store);
    const first = await feed.current();
    expect(read()).toEqual(["h1", "h2", "h3"]);
    expect(capacityOf(first, "h1")).toEqual([{ resourceClass: "FPGA", total: 2, used: 0 }]);

    // Nothing changed: only h3, marked at the very position the view was read up to, is read again (marks count from that position on).
    expect(await feed.current()).toBe(first);
    expect(read()).toEqual(["h3"]);

    await project(es, projector, [
      allocated("h1", "d1", "p1", "h1a", "arq-1"),
      // h3's one GPU leaves.
      { type: "AttachHandleRemoved", data: { hostname: "h3", deployableUuid: "p3", handleUuid: "h3", at: T(50) } },
      ...["a3-rc", "a3-t0", "a3-t1"].map((a) => ({ type: "AttributeRemoved" as const, data: { hostname: "h3", deployableUuid: "p3", attributeUuid: a, key: "k", at: T(50) } })),
      { type: "DeployableRemoved", data: { hostname: "h3", deviceUuid: "d3", deployableUuid: "p3", at: T(50) } },
      { type: "DeviceRemoved", data: { hostname: "h3", deviceUuid: "d3", at: T(50) } },
    ]);
    const second = await feed.current();
    expect(read()).toEqual(["h1", "h3"]);
    expect(second).toBe(first);
    expect(capacityOf(second, "h1")).toEqual([{ resourceClass: "FPGA", total: 2, used: 1 }]);
    expect(capacityOf(second, "h2")).toEqual([{ resourceClass: "FPGA", total: 2, used: 0 }]);
    expect(second.hosts().map((h) => h.hostname).sort()).toEqual(["h1", "h2"]);
    expect(second.hosts().flatMap((h) => h.devices.map((d) => d.deviceUuid)).sort()).toEqual(["d1", "d2"]);
  });

  it("reads every host again when its model was rebuilt from another log (its checkpoint went back)", async () => {
    const { store } = await given([...fpgaHost("h1", "1"), ...fpgaHost("h2", "2"), allocated("h1", "d1", "p1", "h1a", "arq-1")]);
    const { feed, read } = countedFleet(store);
    await feed.current();
    expect(read()).toEqual(["h1", "h2"]);

    const other = new MemoryEventStore();
    await append(other, fpgaHost("h9", "9"));
    await store.drop(resourceProviders);
    await new Projector({ events: other, store, projections }).rebuild([resourceProviders]);
    const view = await feed.current();
    expect(read()).toEqual(["h9"]);
    expect(view.hosts().map((h) => h.hostname)).toEqual(["h9"]);
  });

  it("gives the event loop a turn while it reads a large fleet, and callers arriving meanwhile share the read", async () => {
    const names = Array.from({ length: 60 }, (_, i) => `h${i}`);
    const read: string[] = [];
    const store = new MemoryReadStore();
    const feed = new HostFeed(store, {
      models: [resourceProviders],
      changedSince: [async () => names],
      read: async (_s: ReadStore, hosts: readonly string[]) => {
        const until = performance.now() + hosts.length; // 1 ms of work a host
        while (performance.now() < until);
        read.push(...hosts);
        return hosts.map((hostname) => ({ hostname }));
      },
      empty: () => new Kept(),
    });
    let turns = 0;
    let readWhenTurned = -1;
    const ticking = setInterval(() => {
      turns++;
      if (readWhenTurned < 0) readWhenTurned = read.length;
    }, 0);
    const [a, b] = await Promise.all([feed.current(), feed.current()]);
    clearInterval(ticking);
    expect(a).toBe(b);
    expect(a.hosts.size).toBe(60);
    expect(read).toHaveLength(60);
    // A timer ran while hosts were still to be read (60 ms of reading with a turn every few ms).
    expect(turns).toBeGreaterThan(1);
    expect(readWhenTurned).toBeGreaterThan(0);
    expect(readWhenTurned).toBeLessThan(60);
  });
});

describe("a host-feed given a pacing", () => {
  it("asks a new pacing for each read, and pauses at it between slices of hosts", async () => {
    let names = Array.from({ length: 60 }, (_, i) => `h${i}`);
    const pacings: number[] = [];
    const feed = new HostFeed(
      new MemoryReadStore(),
      { models: [resourceProviders], changedSince: [async () => names], read: async (_s: ReadStore, hosts: readonly string[]) => hosts.map((hostname) => ({ hostname })), empty: () => new Kept() },
      () => {
        const i = pacings.push(0) - 1;
        return { pause: async () => void pacings[i]!++ };
      },
    );
    expect((await feed.current()).hosts.size).toBe(60);
    names = ["h1", "h2", "h3", "h4", "h5"];
    await feed.current();
    // 60 hosts read four at a time, then the five changed since.
    expect(pacings).toEqual([15, 2]);
  });
});

class Kept implements HostView<{ hostname: string }> {
  readonly hosts = new Map<string, { hostname: string }>();
  put(host: { hostname: string }): void {
    this.hosts.set(host.hostname, host);
  }
  remove(hostname: string): void {
    this.hosts.delete(hostname);
  }
}
