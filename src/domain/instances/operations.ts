/**
 * What each instance operation does to the instance's accelerators (seed
 * cyborg-nova-glance-interaction, "OpenStack Server API Behavior"):
 * - keep: the accelerators stay attached (pause, suspend, lock, reboot, rebuild, ...).
 * - release: they are detached and freed (stop, shelve, delete: os-acc's unplug is "called when an
 *   instance is stopped, shelved, or deleted").
 * - move: freed on the old host; the instance plugs again where it is scheduled (resize, cold
 *   migration, and evacuate: the seed leaves evacuation undefined; we treat it as a cold
 *   migration, because the old host is presumed down and its handles must become free).
 * - plug: the instance plugs again (start, unshelve, restore: os-acc's plug is "called by Nova
 *   compute when an instance is started, unshelved, or restored"). A start plugs on the host the
 *   instance is on; an unshelve or restore where it is scheduled again.
 * Live migration and booting from a snapshot are refused: accelerator state cannot follow.
 */
import { DomainError } from "../shared/types.js";

export type OperationEffect = "keep" | "release" | "move" | "plug";

export const INSTANCE_OPERATIONS: Readonly<Record<string, OperationEffect>> = {
  pause: "keep",
  unpause: "keep",
  suspend: "keep",
  resume: "keep",
  lock: "keep",
  unlock: "keep",
  reboot: "keep",
  rebuild: "keep",
  "set-password": "keep",
  "trigger-crash-dump": "keep",
  stop: "release",
  shelve: "release",
  delete: "release",
  resize: "move",
  "cold-migrate": "move",
  evacuate: "move",
  start: "plug",
  unshelve: "plug",
  restore: "plug",
};

export const UNSUPPORTED_OPERATIONS: Readonly<Record<string, string>> = {
  "live-migrate": "live migration is not supported: there is no way yet to migrate accelerator state with the instance",
  "boot-from-snapshot": "booting from a snapshot is not supported: the accelerators' state may not match the snapshot's",
};

/** The effect of `operation`; UNSUPPORTED_OPERATION for the refused ones, BAD_USER_INPUT for an unknown one. */
export function operationEffect(operation: unknown): OperationEffect {
  const op = typeof operation === "string" ? operation : "";
  if (Object.hasOwn(UNSUPPORTED_OPERATIONS, op)) throw new DomainError("UNSUPPORTED_OPERATION", UNSUPPORTED_OPERATIONS[op]!, "operation");
  if (!Object.hasOwn(INSTANCE_OPERATIONS, op)) {
    const known = [...Object.keys(INSTANCE_OPERATIONS), ...Object.keys(UNSUPPORTED_OPERATIONS)].join(", ");
    throw new DomainError("BAD_USER_INPUT", `unknown instance operation ${JSON.stringify(operation)}; one of ${known}`, "operation");
  }
  return INSTANCE_OPERATIONS[op]!;
}
