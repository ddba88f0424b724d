/**
 * Where an accelerator goes once bound (device-profiles spec, `accel:attach_target`): to the VM
 * (the default: os-acc hands the hypervisor a device to pass through), to the host (infrastructure
 * offload: the compute node uses the device itself, nothing is passed through), or nowhere
 * (indirect access: the instance reaches it through another service). The bind is the same; what
 * os-acc attaches is not.
 */
import type { ProfileGroup } from "./events.js";

export const ATTACH_TARGETS = ["VM", "host", "none"] as const;
export type AttachTarget = (typeof ATTACH_TARGETS)[number];

export function attachTargetOf(group: ProfileGroup): AttachTarget {
  const v = group["accel:attach_target"];
  return v === "host" || v === "none" ? v : "VM";
}
