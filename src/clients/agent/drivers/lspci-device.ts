/**
 * A device as the lspci-based drivers (nvidia-gpu, xilinx-fpga, generic pci) report it: board info
 * from its lspci line, the control path at its address, and one deployable named after that address.
 */
import type { DriverDeployable, DriverDevice } from "../../../domain/inventory/report.js";
import type { DeviceType, JsonObject } from "../../../domain/shared/types.js";
import type { LspciDevice } from "./lspci.js";
import { deployableName, pciAddress } from "./naming.js";

export interface LspciDeviceShape {
  type: DeviceType;
  model: string;
  vendorBoardInfo: JsonObject | null;
  deployable: Omit<DriverDeployable, "name">;
}

export function lspciDevice(hostname: string, dev: LspciDevice, shape: LspciDeviceShape): DriverDevice {
  return {
    type: shape.type,
    vendor: dev.vendorId,
    model: shape.model,
    stdBoardInfo: { product_id: dev.productId, controller: dev.className },
    vendorBoardInfo: shape.vendorBoardInfo,
    controlPath: { type: "PCI", info: pciAddress(dev.address) },
    stub: false,
    deployables: [{ name: deployableName(hostname, dev.address), ...shape.deployable }],
  };
}
