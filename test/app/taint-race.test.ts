/**
 * 1,000 binds racing a taint on the devices they target: no bind lands on a device after its
 * taint's commit. Two application instances share one log (as two API replicas share a store), so
 * the binds and the taints meet on the host streams' revisions, not on one process's locks; half
 * of the binds allocate at once (the mutation's path), half through allocateForArq (the binder's).
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import type { ArqView } from "../../src/domain/arqs/view.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { AppendStep } from "../../src/infra/eventstore/port.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import { ADMIN, ctx, fpga } from "./support.js";

const HOSTS = ["compute1", "compute2", "compute3", "compute4"];
const PER_HOST = 250;
/** Each host's device is tainted once this many binds have landed on it: the rest race the taint. */
const TAINT_AFTER = 60;

/** One FPGA with `handles` virtual functions (up to 256: PCI devices 00-1f, functions 0-7). */
function manyFunctions(host: string, handles: number): DriverDevice {
  const base = fpga(host, "af", 1);
  const info = (i: number) => ({ domain: "0000", bus: "af", device: (i >> 3).toString(16).padStart(2, "0"), function: String(i & 7) });
  const deployable = { ...base.deployables[0]!, numAccelerators: handles, attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "PCI" as const, info: info(i) })) };
  return { ...base, deployables: [deployable] };
}

describe("binds racing a taint", () => {
  it(`${HOSTS.length * PER_HOST} binds: none lands on a device after its taint's commit`, async () => {
    const store = new MemoryEventStore();
    let n = 0;
    const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
    const [apiA, apiB] = [new Application({ store, newId }), new Application({ store, newId })];
    const nova = ctx();

    for (const host of HOSTS) await apiA.reportHostInventory({ ...ADMIN, principal: `agent:${host}` }, host, [manyFunctions(host, PER_HOST)]);
    await apiA.createDeviceProfile(ADMIN, { name: "one", groups: [{ "resources:FPGA": String(PER_HOST) }] });
    const arqs: ArqView[] = [];
    for (const _ of HOSTS) arqs.push(...(await apiA.createArqs(nova, { deviceProfileName: "one" })));
    const deviceOf = new Map<string, string>();
    for (const host of HOSTS) deviceOf.set(host, ((await store.readStream(stream.host(host))).find((e) => e.type === "DeviceDiscovered")!.data as { deviceUuid: string }).deviceUuid);

    // Taint each host's device from the other replica once TAINT_AFTER binds have landed there.
    const landed = new Map<string, number>();
    const taints: Array<Promise<void>> = [];
    const appendSequence = store.appendSequence.bind(store);
    store.appendSequence = async (steps: readonly AppendStep[]) => {
      const result = await appendSequence(steps);
      for (const step of steps.slice(0, result.appended.length)) noteLanded(step);
      return result;
    };
    const append = store.append.bind(store);
    store.append = async (name, events, expected) => {
      const result = await append(name, events, expected);
      noteLanded({ stream: name, events, expectedRevision: expected });
      return result;
    };
    function noteLanded(step: AppendStep) {
      for (const e of step.events) {
        if (e.type !== "AttachHandleAllocated") continue;
        const host = (e.data as { hostname: string }).hostname;
        landed.set(host, (landed.get(host) ?? 0) + 1);
        if (landed.get(host) === TAINT_AFTER) {
          const deviceUuid = deviceOf.get(host)!;
          taints.push(apiB.taintDevice({ ...ADMIN, at: new Date().toISOString() }, host, deviceUuid, { key: "cyborg.openstack.org/health", effect: "NoSchedule", reason: "XID 48" }));
        }
      }
    }

    const binds = arqs.map(async (arq, i) => {
      const host = HOSTS[i % HOSTS.length]!;
      const binding = { arqUuid: arq.uuid, hostname: host, deviceRpUuid: rpUuidFor(`${host}_0000:af:00.0`), instanceUuid: `vm-${i}` };
      const api = i % 2 === 0 ? apiA : apiB;
      try {
        if (i % 4 < 2) return (await api.startBinds(nova, [binding], { allocate: true }))[0]!.state;
        await api.startBinds(nova, [binding]);
        const r = await api.allocateForArq({ ...nova, principal: "system:binder" }, arq.uuid);
        return r.ok ? r.arq.state : "REFUSED";
      } catch {
        return "ERROR";
      }
    });
    const states = await Promise.all(binds);
    await Promise.all(taints);
    expect(taints).toHaveLength(HOSTS.length);

    let before = 0;
    let bound = 0;
    for (const host of HOSTS) {
      const events = await store.readStream(stream.host(host));
      const taintAt = events.findIndex((e) => e.type === "DeviceTainted");
      expect(taintAt, host).toBeGreaterThan(0);
      const after = events.slice(taintAt + 1).filter((e) => e.type === "AttachHandleAllocated");
      expect(after, `${host}: allocations after the taint`).toEqual([]);
      before += events.slice(0, taintAt).filter((e) => e.type === "AttachHandleAllocated").length;
    }
    for (const arq of arqs) if ((await apiA.getArq(arq.uuid))?.state === "BOUND") bound++;
    // The race was real: binds landed before each taint, and the rest were refused, not lost.
    expect(before).toBeGreaterThanOrEqual(HOSTS.length * TAINT_AFTER);
    expect(bound).toBe(before);
    expect(states.filter((s) => s === "BOUND")).toHaveLength(bound);
    expect(bound).toBeLessThan(arqs.length);
  }, 120_000);
});
