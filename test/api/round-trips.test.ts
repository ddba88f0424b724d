import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const READS = ["getDocs", "getMembers", "count", "range"] as const;

/** Counts the read store's read calls (each is one round trip on Redis). */
function counting(store: ReadStore) {
  const counter = { reads: 0 };
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if ((READS as readonly string[]).includes(String(prop))) counter.reads++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { wrapped, counter };
}

const hostDevices = (host: number) =>
  Array.from({ length: 10 }, (_, d) => {
    const bus = (16 + d).toString(16);
    return {
      type: "GPU",
      vendor: "10de",
      model: "T4",
      controlPath: { type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } },
      deployables: [
        {
          name: `host${host}_0000:${bus}:00.0`,
          numAccelerators: 2,
          attributes: [{ key: "rc", value: "PGPU" }, { key: "trait0", value: "CUSTOM_GPU_NVIDIA_1EB8" }],
          attachHandles: [0, 1].map((f) => ({ type: "PCI", info: { domain: "0000", bus, device: "00", function: String(f) } })),
        },
      ],
    };
  });

describe("DataLoader batching", () => {
  let t: TestService;
  let counter: { reads: number };
  beforeAll(async () => {
    t = await startTestService({
      overrides: {
        wrapReadStore: (s) => {
          const c = counting(s);
          counter = c.counter;
          return c.wrapped;
        },
      },
    });
    for (let h = 0; h < 10; h++) await t.ok("admin", op.REPORT, { hostname: `host${h}`, devices: hostDevices(h) });
  });
  afterAll(() => t?.close());

  it("100 devices with their deployables, attributes, handles and holders cost a bounded number of round trips", async () => {
    const query = `{ devices(first: 100) { totalCount nodes { uuid hostname controlPath { info }
      deployables { uuid name traits resourceClass parent { uuid } children { uuid } device { uuid }
        attachHandles { uuid inUse info acceleratorRequest { uuid } } } } } }`;
    counter.reads = 0;
    const data = await t.ok("admin", query);
    expect(data.devices.totalCount).toBe(100);
    expect(data.devices.nodes).toHaveLength(100);
    expect(data.devices.nodes.flatMap((d: any) => d.deployables.flatMap((x: any) => x.attachHandles))).toHaveLength(200);
    // One list read, then one batch per nested field level, whatever the number of parents.
    expect(counter.reads).toBeLessThanOrEqual(12);

    // The same query for 10 devices costs the same number of round trips: batching, not N+1.
    counter.reads = 0;
    await t.ok("admin", query.replace("first: 100", "first: 10"));
    const small = counter.reads;
    counter.reads = 0;
    await t.ok("admin", query);
    expect(counter.reads).toBe(small);
  });
});
