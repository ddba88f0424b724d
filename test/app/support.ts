import { Application } from "../../src/app/application.js";
import { loadAggregate } from "../../src/app/handle.js";
import { hostDecider } from "../../src/domain/inventory/decider.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import { stream, type CommandContext } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";

export const ADMIN: CommandContext = { principal: "admin", correlationId: "corr-1", causationId: "req-1", at: "2026-03-01T10:00:00.000Z", isAdmin: true };
export const ctx = (over: Partial<CommandContext> = {}): CommandContext => ({
  principal: "nova",
  correlationId: "corr-2",
  causationId: "req-2",
  at: "2026-03-01T10:01:00.000Z",
  projectId: "p1",
  ...over,
});

export function setup() {
  const store = new MemoryEventStore();
  let n = 0;
  const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
  const app = new Application({ store, newId });
  return { store, app, newId };
}

export const pci = (bus: string, fn = "0") => ({ domain: "0000", bus, device: "00", function: fn });

/** One FPGA with `handles` PCI handles on one deployable named `<host>_0000:<bus>:00.0`. */
export function fpga(host: string, bus: string, handles = 1): DriverDevice {
  return {
    type: "FPGA",
    vendor: "0x8086",
    model: "PAC Arria10",
    controlPath: { type: "PCI", info: pci(bus) },
    deployables: [
      {
        name: `${host}_0000:${bus}:00.0`,
        numAccelerators: handles,
        driverName: "intel",
        attributes: [{ key: "rc", value: "FPGA" }],
        attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "PCI" as const, info: pci(bus, String(i)) })),
      },
    ],
  };
}

/** The fake driver's FPGA: one region (CUSTOM_FPGA_FAKE_REGION_R1, then `extra` traits) that can be programmed. */
export const fpgaRegion = (host: string, handles = 4, extra: string[] = []): DriverDevice => ({
  type: "FPGA",
  vendor: "0xABCD",
  model: "fake",
  controlPath: { type: "PCI", info: pci("0c") },
  deployables: [
    {
      name: `${host}_FakeDevice`,
      numAccelerators: handles,
      driverName: "fake",
      attributes: [{ key: "rc", value: "FPGA" }, ...["CUSTOM_FPGA_FAKE_REGION_R1", ...extra].map((value, i) => ({ key: `trait${i}`, value }))],
      attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "TEST_PCI" as const, info: pci("0c", String(i + 1)) })),
    },
  ],
});

export async function hostState(store: EventStore, hostname: string) {
  return (await loadAggregate(store, stream.host(hostname), hostDecider)).state;
}

export async function types(store: EventStore, streamName: string) {
  return (await store.readStream(streamName)).map((e) => e.type);
}

export function deferred() {
  let resolve!: () => void;
  const d = { settled: false, resolve: () => resolve(), promise: new Promise<void>((r) => (resolve = () => ((d.settled = true), r()))) };
  return d;
}

export async function until(check: () => Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 1));
  }
}
