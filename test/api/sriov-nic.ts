/**
 * An SR-IOV NIC as a host report carries it: the physical function's deployable offers its VFs
 * (resource class SRIOV_NET_VF, one PCI attach handle per VF) and the port's egress bandwidth is a
 * capacity ARQs draw from by amount (NET_BW_EGR_KILOBIT_PER_SEC).
 */
export const NIC_BW_CLASS = "NET_BW_EGR_KILOBIT_PER_SEC";

export const sriovNic = (opts: { vfs?: number; totalKbps?: number | null; hostname?: string; bus?: string } = {}) => {
  const { vfs = 4, totalKbps = 25_000_000, hostname = "compute1", bus = "3b" } = opts;
  return {
    type: "NIC",
    vendor: "0x8086",
    model: "Ethernet Controller E810-XXV",
    controlPath: { type: "PCI", info: { domain: "0000", bus, device: "00", function: "0" } },
    ...(totalKbps === null ? {} : { capacities: [{ name: "bandwidth", resourceClass: NIC_BW_CLASS, total: totalKbps, unit: "kbit/s" }] }),
    deployables: [
      {
        name: `${hostname}_0000:${bus}:00.0`,
        numAccelerators: vfs,
        driverName: "pci",
        attributes: [{ key: "rc", value: "SRIOV_NET_VF" }],
        attachHandles: Array.from({ length: vfs }, (_, i) => ({
          type: "PCI",
          info: { domain: "0000", bus, device: "02", function: String(i) },
        })),
      },
    ],
  };
};
