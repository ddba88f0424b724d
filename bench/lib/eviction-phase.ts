/**
 * bench:health's eviction figure: from a NoExecute taint asked of the application to each holder's
 * eviction notice committed on its ARQ stream (what the GraphQL field, REST and Nova's log line
 * show), with HOLDERS ARQs bound to one device, the eviction follower running in-process.
 * Each round taints the device with a key of its own (a holder is told once per taint), then
 * removes the taint.
 */
import { pino } from "pino";
import type { Application } from "../../src/app/application.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import type { CommandContext } from "../../src/domain/shared/types.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { EvictionFollower } from "../../src/reactors/eviction/follower.js";
import { HostWriter } from "./host-writer.js";

const HOST = "bench-evict";
const pci = (fn: number) => ({ domain: "0000", bus: "3b", device: String(Math.floor(fn / 8)).padStart(2, "0"), function: String(fn % 8) });

const ctx = (): CommandContext => ({ principal: "admin", correlationId: crypto.randomUUID(), causationId: crypto.randomUUID(), at: new Date().toISOString(), isAdmin: true, projectId: "bench" });

/** Per-holder latencies (ms) over `rounds` taints of a device held by `holders` ARQs. */
export async function evictionLatencies(store: EventStore, app: Application, holders: number, rounds: number): Promise<number[]> {
  const name = `${HOST}_0000:3b:00.0`;
  await app.reportHostInventory(ctx(), HOST, [
    {
      type: "GPU",
      vendor: "0x10de",
      model: "bench",
      controlPath: { type: "PCI", info: pci(0) },
      deployables: [{ name, numAccelerators: holders, driverName: "nvidia", attributes: [{ key: "rc", value: "PGPU" }], attachHandles: Array.from({ length: holders }, (_, i) => ({ type: "PCI" as const, info: pci(i) })) }],
    },
  ]);
  await app.createDeviceProfile(ctx(), { name: "bench-evict", groups: [{ "resources:PGPU": "1" }] });
  const arqs = [];
  for (let i = 0; i < holders; i++) arqs.push(...(await app.createArqs(ctx(), { deviceProfileName: "bench-evict" })));
  const rp = rpUuidFor(name);
  await app.startBinds(ctx(), arqs.map((a) => ({ arqUuid: a.uuid, hostname: HOST, deviceRpUuid: rp, instanceUuid: crypto.randomUUID() })), { allocate: true });
  const deviceUuid = await new HostWriter(store).deviceAt(HOST, "3b");
  const bound = await Promise.all(arqs.map((a) => app.getArq(a.uuid)));
  if (bound.some((a) => a?.state !== "BOUND")) throw new Error("not every holder of the eviction bench's device is BOUND");

  let t0 = 0;
  let got: number[] = [];
  let done: () => void = () => undefined;
  const follower = new EvictionFollower({ store, app, log: pino({ level: "warn" }), deadlineMs: 300_000, onNotice: () => got.push(performance.now() - t0) === holders && done() });
  await follower.start();
  const all: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      got = [];
      const delivered = new Promise<void>((resolve) => (done = resolve));
      const key = `example.com/drain-${r}`;
      t0 = performance.now();
      await app.taintDevice(ctx(), HOST, deviceUuid, { key, effect: "NoExecute", reason: "bench: drain" });
      const timeout = new Promise<"timeout">((res) => setTimeout(() => res("timeout"), 30_000));
      if ((await Promise.race([delivered, timeout])) === "timeout") throw new Error(`only ${got.length} of ${holders} eviction notices within 30 s`);
      all.push(...got);
      await app.untaintDevice(ctx(), HOST, deviceUuid, { key, reason: "bench: reset" });
    }
  } finally {
    await follower.stop();
  }
  return all;
}
