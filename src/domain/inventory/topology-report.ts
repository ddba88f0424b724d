/**
 * Where a device sits on its host, as its driver reads it (sysfs, `nvidia-smi topo -m`): rides on
 * DriverDevice.topology (report.ts). Placement constraints compare these values between the
 * devices a profile's groups get ("same NUMA node", "same PCIe switch", "same link domain").
 */
export interface DeviceTopology {
  /** sysfs `numa_node`; null when the platform has none (-1). */
  numaNode: number | null;
  /** The PCIe root port's address ("0000:00:01.0"), from the device's sysfs path. */
  pcieRoot: string | null;
  /** The nearest PCIe switch's upstream port address above the device, or null when it hangs off the root port. */
  pcieSwitch: string | null;
  /**
   * A host-local name of the peer-link domain (NVLink, xGMI) the device belongs to: devices that
   * reach each other over such links share it; null when it has no peer link.
   */
  linkDomain: string | null;
}
