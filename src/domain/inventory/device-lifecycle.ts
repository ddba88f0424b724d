/**
 * A device's place in the health loop, as one pure function of its node: what an operator reads
 * first on a device (GraphQL `Device.lifecycleState`, the console), derived, never stored, so that
 * it can never disagree with the taints, holders and requests it is read from.
 *
 * Precedence: FAILED > CLEANING > QUALIFYING > DRAINING > DRAINED > TAINTED > AVAILABLE.
 * - DRAINING: a NoExecute taint, and ARQs still hold the device (they were asked to move).
 * - DRAINED: a NoExecute taint, and nothing holds the device any more.
 * - TAINTED: only NoSchedule taints: no new bind, the holders stay.
 * - AVAILABLE: no taint.
 */
import type { Taint } from "./events.js";
import type { DeviceNode } from "./host-tree.js";

export const DEVICE_LIFECYCLE_STATES = ["AVAILABLE", "TAINTED", "DRAINING", "DRAINED", "CLEANING", "QUALIFYING", "FAILED"] as const;
export type DeviceLifecycleState = (typeof DEVICE_LIFECYCLE_STATES)[number];

/** What the state is read from: the device's taints, how many ARQs hold it, and the loop's later steps. */
export interface LifecycleInputs {
  taints: readonly Pick<Taint, "effect">[];
  /** ARQs holding one of its attach handles. */
  holders: number;
  /** Left FAILED by a failed clean or re-qualification, until repaired. */
  failed?: boolean;
  /** A clean step requested and not yet reported. */
  cleaning?: boolean;
  /** Cleaned, waiting for a health check to pass before it is offered again. */
  qualifying?: boolean;
}

export function lifecycleOf(i: LifecycleInputs): DeviceLifecycleState {
  if (i.failed) return "FAILED";
  if (i.cleaning) return "CLEANING";
  if (i.qualifying) return "QUALIFYING";
  if (i.taints.some((t) => t.effect === "NoExecute")) return i.holders > 0 ? "DRAINING" : "DRAINED";
  return i.taints.length > 0 ? "TAINTED" : "AVAILABLE";
}

/** The ARQs holding one of the device's attach handles. */
export function holdersOf(device: DeviceNode): string[] {
  const out: string[] = [];
  for (const d of device.deployables.values()) for (const h of d.handles.values()) if (h.allocatedTo) out.push(h.allocatedTo.arqUuid);
  return out;
}

/**
 * Whether the scheduler may place anything new on a device in this state: only AVAILABLE. Every
 * other state refuses new binds (a taint, a clean in flight, a re-qualification pending, or a
 * failure), so Placement must hold the device's capacity reserved, or Nova would pick it in vain.
 */
export function isOffered(state: DeviceLifecycleState): boolean {
  return state === "AVAILABLE";
}

export function deviceLifecycle(device: DeviceNode): DeviceLifecycleState {
  const c = device.cleaning;
  return lifecycleOf({ taints: device.taints, holders: holdersOf(device).length, failed: c.failed !== null, cleaning: c.inFlight !== null, qualifying: c.qualifyingSince !== null });
}
