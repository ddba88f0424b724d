/**
 * Writes host streams as the service does, without the service: read `host-<hostname>`, fold it
 * with the domain's evolve, decide the command with hostDecider, append with the expected
 * revision (again on a conflict). Tests and bench:placement use it to produce exactly the events
 * an agent's report, an operator's maintenance switch or a bind would produce.
 */
import { randomUUID } from "node:crypto";
import { hostDecider, type HostCommand, type HostState } from "../../src/domain/inventory/decider.js";
import type { InventoryEvent } from "../../src/domain/inventory/events.js";
import type { TaintEffect } from "../../src/domain/inventory/taints.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import { stream, type DeviceStatus } from "../../src/domain/shared/types.js";
import { WrongExpectedRevisionError, type EventStore } from "../../src/infra/eventstore/port.js";

export class HostWriter {
  constructor(
    readonly store: EventStore,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  async load(host: string): Promise<{ state: HostState; revision: number }> {
    const events = await this.store.readStream(stream.host(host));
    const state = events.reduce((s, e) => hostDecider.evolve(s, { type: e.type, data: e.data } as InventoryEvent), hostDecider.initialState());
    return { state, revision: events.length - 1 };
  }

  async run(host: string, command: HostCommand): Promise<InventoryEvent[]> {
    for (;;) {
      const { state, revision } = await this.load(host);
      const events = hostDecider.decide(command, state);
      if (events.length === 0) return events;
      const at = this.now();
      const metadata = { principal: `agent:${host}`, correlationId: randomUUID(), causationId: randomUUID(), at };
      try {
        await this.store.append(
          stream.host(host),
          events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
          revision < 0 ? "no_stream" : revision,
        );
        return events;
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
      }
    }
  }

  report(host: string, devices: DriverDevice[]): Promise<InventoryEvent[]> {
    return this.run(host, { type: "ReportHostInventory", data: { hostname: host, devices, at: this.now() } });
  }

  async setStatus(host: string, deviceUuid: string, status: DeviceStatus): Promise<InventoryEvent[]> {
    return this.run(host, { type: "SetDeviceStatus", data: { hostname: host, deviceUuid, status, at: this.now() } });
  }

  taint(host: string, deviceUuid: string, key: string, effect: TaintEffect, reason = "test"): Promise<InventoryEvent[]> {
    return this.run(host, { type: "TaintDevice", data: { hostname: host, deviceUuid, key, value: "", effect, by: "admin", reason, at: this.now() } });
  }

  untaint(host: string, deviceUuid: string, key: string, effect: TaintEffect | null = null): Promise<InventoryEvent[]> {
    return this.run(host, { type: "UntaintDevice", data: { hostname: host, deviceUuid, key, effect, by: "admin", reason: "", at: this.now() } });
  }

  allocate(host: string, rpUuid: string, arqUuid: string, instanceUuid: string): Promise<InventoryEvent[]> {
    return this.run(host, { type: "AllocateAttachHandle", data: { hostname: host, rpUuid, arqUuid, instanceUuid, at: this.now() } });
  }

  release(host: string, arqUuid: string): Promise<InventoryEvent[]> {
    return this.run(host, { type: "ReleaseAttachHandle", data: { hostname: host, arqUuid, at: this.now() } });
  }

  /** The uuid of the device at this PCI bus on the host. */
  async deviceAt(host: string, bus: string): Promise<string> {
    const { state } = await this.load(host);
    const device = [...state.devices.values()].find((d) => (d.controlPath.info as { bus?: string }).bus === bus);
    if (!device) throw new Error(`no device at bus ${bus} on ${host}`);
    return device.uuid;
  }
}

/** An FPGA card as a driver reports it: one deployable `<host>_0000:<bus>:00.0` with `accelerators` PCI handles. */
export function fpgaCard(host: string, bus: string, o: { accelerators?: number; traits?: string[]; rc?: string } = {}): DriverDevice {
  const n = o.accelerators ?? 1;
  const pci = (i: number) => ({ domain: "0000", bus, device: (i >> 3).toString(16).padStart(2, "0"), function: String(i & 7) });
  return {
    type: "FPGA",
    vendor: "0x8086",
    model: "PAC Arria10",
    stdBoardInfo: { product_id: "09c4" },
    controlPath: { type: "PCI", info: pci(0) },
    deployables: [
      {
        name: `${host}_0000:${bus}:00.0`,
        numAccelerators: n,
        driverName: "intel",
        attributes: [{ key: "rc", value: o.rc ?? "FPGA" }, ...(o.traits ?? ["CUSTOM_FPGA_INTEL_PAC_ARRIA10"]).map((value, i) => ({ key: `trait${i}`, value }))],
        attachHandles: Array.from({ length: n }, (_, i) => ({ type: "PCI" as const, info: pci(i) })),
      },
    ],
  };
}
