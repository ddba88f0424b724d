/** An attach handle as a driver reports it, on a deployable (report.ts) or a partition (partitioning-report.ts). */
import type { AttachHandleType, JsonObject } from "../shared/types.js";

export interface DriverAttachHandle {
  type: AttachHandleType;
  /** PCI: {domain,bus,device,function[,physical_network]}; MDEV adds asked_type and vgpu_mark. */
  info: JsonObject;
}
