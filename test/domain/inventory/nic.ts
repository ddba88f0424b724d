/** An SR-IOV NIC for the host decider's tests: its VFs the PF's handles, its bandwidth a capacity. */
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import { HOST, bdf, pci } from "./fixtures.js";

export const BW = "NET_BW_EGR_KILOBIT_PER_SEC";
export const PPS = "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC";
export const NIC_RP = rpUuidFor(`${HOST}_${bdf("3b")}`);

export function nic(opts: { vfs?: number; bandwidth?: number; packetRate?: number | null } = {}): DriverDevice {
  const { vfs = 4, bandwidth = 10_000, packetRate = null } = opts;
  return {
    type: "NIC",
    vendor: "0x8086",
    model: "E810",
    controlPath: { type: "PCI", info: pci("3b") },
    capacities: [
      { name: "bandwidth", resourceClass: BW, total: bandwidth, unit: "kbit/s" },
      ...(packetRate === null ? [] : [{ name: "packet rate", resourceClass: PPS, total: packetRate, unit: "kpps" }]),
    ],
    deployables: [
      {
        name: `${HOST}_${bdf("3b")}`,
        numAccelerators: vfs,
        driverName: "pci",
        attributes: [{ key: "rc", value: "SRIOV_NET_VF" }],
        attachHandles: Array.from({ length: vfs }, (_, i) => ({ type: "PCI" as const, info: pci("3b", String(i), "02") })),
      },
    ],
  };
}

/** The group `resources:SRIOV_NET_VF=1` with these amounts, as a bind's requirements. */
export const drawing = (amounts: Record<string, number>) => ({
  resourceClasses: ["SRIOV_NET_VF"],
  required: [],
  forbidden: [],
  amounts: Object.entries(amounts).map(([resourceClass, amount]) => ({ resourceClass, amount })),
});
