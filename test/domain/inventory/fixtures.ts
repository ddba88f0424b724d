import type { DriverDeployable, DriverDevice } from "../../../src/domain/inventory/report.js";
import { hostDecider, type HostCommand } from "../../../src/domain/inventory/decider.js";
import type { InventoryEvent } from "../../../src/domain/inventory/events.js";
import { diffHostReport } from "../../../src/domain/inventory/diff.js";
import { initialHostState, type HostState } from "../../../src/domain/inventory/state.js";

export const HOST = "compute1";
export const at = "2026-03-01T10:00:00.000Z";

export const pci = (bus: string, fn = "0", device = "00") => ({ domain: "0000", bus, device, function: fn });
export const bdf = (bus: string, fn = "0") => `0000:${bus}:00.${fn}`;
/** A deployable name of HOST's (`<host>_<device>`, as the drivers name them). */
export const named = (device: string) => `${HOST}_${device}`;

export function deployable(bus: string, opts: Partial<DriverDeployable> & { handles?: number } = {}): DriverDeployable {
  const { handles = 1, ...rest } = opts;
  return {
    name: `${HOST}_${bdf(bus)}`,
    numAccelerators: handles,
    driverName: "intel",
    attributes: [
      { key: "rc", value: "FPGA" },
      { key: "trait0", value: "CUSTOM_FPGA_INTEL" },
    ],
    attachHandles: Array.from({ length: handles }, (_, i) => ({ type: "PCI" as const, info: pci(bus, String(i)) })),
    ...rest,
  };
}

export function fpga(bus: string, opts: Partial<DriverDevice> & { handles?: number } = {}): DriverDevice {
  const { handles, ...rest } = opts;
  return {
    type: "FPGA",
    vendor: "0x8086",
    model: "PAC Arria10",
    stdBoardInfo: { product_id: "09c4" },
    vendorBoardInfo: null,
    controlPath: { type: "PCI", info: pci(bus) },
    deployables: [deployable(bus, { handles })],
    ...rest,
  };
}

export function fold(events: readonly InventoryEvent[], state: HostState = initialHostState()): HostState {
  return events.reduce(hostDecider.evolve, state);
}

/** The state after reporting each list of devices in turn. */
export function reported(...reports: DriverDevice[][]): HostState {
  return reports.reduce((s, devices) => fold(diffHostReport(s, HOST, devices, at).events, s), initialHostState());
}

export const report = (state: HostState, devices: unknown) => diffHostReport(state, HOST, devices, at);
export const decide = (state: HostState, command: HostCommand) => hostDecider.decide(command, state);
export const apply = (state: HostState, command: HostCommand) => fold(decide(state, command), state);

export const allocate = (rpUuid: string, arqUuid: string, instanceUuid = `vm-${arqUuid}`): HostCommand => ({
  type: "AllocateAttachHandle",
  data: { hostname: HOST, rpUuid, arqUuid, instanceUuid, at },
});
export const release = (arqUuid: string): HostCommand => ({ type: "ReleaseAttachHandle", data: { hostname: HOST, arqUuid, at } });

export const types = (events: readonly InventoryEvent[]) => events.map((e) => e.type);
