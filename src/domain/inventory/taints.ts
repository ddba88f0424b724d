/**
 * Taints on a host's devices (as Kubernetes DRA device taints): a device carries taints, each a
 * key, a value and an effect, with who set it, why and when. Any taint keeps new binds off the
 * device unless the ARQ's group tolerates it (allocation.ts), and Placement reserves the device
 * while it carries one (resource-providers.ts). A NoExecute taint also asks its holders to move.
 *
 * One taint per (key, effect) on a device: tainting again with the same key and effect replaces it.
 * Cyborg's status is what clients of its API see: MAINTAINING while the device carries any taint,
 * ENABLED otherwise; its `disable` is the maintenance taint, its `enable` removes it.
 */
import { DomainError, type DeviceStatus } from "../shared/types.js";
import { isTaintEffect, taintKeyProblem, taintValueProblem, tolerates, type TaintEffect, type Toleration } from "../shared/tolerations.js";
import type { DeviceTainted, DeviceUntainted, Taint } from "./events.js";
import type { DeviceNode, HostState } from "./host-tree.js";

export { TAINT_EFFECTS, type TaintEffect, type Toleration } from "../shared/tolerations.js";
export type { Taint } from "./events.js";


/** The taint Cyborg's `disable` (and `setDeviceStatus(MAINTAINING)`) sets. */
export const MAINTENANCE_TAINT_KEY = "cyborg.openstack.org/maintenance";
/** The key health rules use. */
export const HEALTH_TAINT_KEY = "cyborg.openstack.org/health";
export const MAX_TAINTS_PER_DEVICE = 32;
export const MAX_TAINT_REASON_LENGTH = 1024;
export const MAX_TAINT_BY_LENGTH = 255;

export type TaintCommand =
  | { type: "TaintDevice"; data: { hostname: string; deviceUuid: string; key: string; value: string; effect: TaintEffect; by: string; reason: string; at: string } }
  | { type: "UntaintDevice"; data: { hostname: string; deviceUuid: string; key: string; effect: TaintEffect | null; by: string; reason: string; at: string } };

type TaintInput = Extract<TaintCommand, { type: "TaintDevice" }>["data"];
type UntaintInput = Extract<TaintCommand, { type: "UntaintDevice" }>["data"];

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

/** Cyborg's status for a device with these taints. */
export function statusOf(taints: readonly Taint[]): DeviceStatus {
  return taints.length > 0 ? "MAINTAINING" : "ENABLED";
}

/** `key=value:Effect`, as Kubernetes prints a taint. */
export function taintLabel(t: { key: string; value?: string; effect: TaintEffect | null }): string {
  return `${t.key}${t.value ? `=${t.value}` : ""}${t.effect ? `:${t.effect}` : ""}`;
}

/** The taints with `taint` in place of the one of its key and effect (or added at the end). */
export function withTaint(taints: readonly Taint[], taint: Taint): Taint[] {
  const i = taints.findIndex((t) => t.key === taint.key && t.effect === taint.effect);
  return i < 0 ? [...taints, taint] : taints.map((t, j) => (j === i ? taint : t));
}

export function withoutTaint(taints: readonly Taint[], key: string, effect: TaintEffect): Taint[] {
  return taints.filter((t) => !(t.key === key && t.effect === effect));
}

/** Checks a taint's key, value, effect, reason and author: BAD_USER_INPUT naming the field. */
export function validateTaint(input: { key: unknown; value: unknown; effect: unknown; reason: unknown; by: unknown }): Omit<Taint, "at"> {
  const { key, value, effect, reason, by } = input;
  if (typeof key !== "string") throw bad("key", "A taint needs a key, such as cyborg.openstack.org/maintenance");
  const keyProblem = taintKeyProblem(key);
  if (keyProblem) throw bad("key", `Taint key ${JSON.stringify(key)} is not valid: ${keyProblem}`);
  const v = value ?? "";
  if (typeof v !== "string") throw bad("value", "A taint's value is a string");
  const valueProblem = taintValueProblem(v);
  if (valueProblem) throw bad("value", `Taint value ${JSON.stringify(v)} is not valid: ${valueProblem}`);
  if (!isTaintEffect(effect)) throw bad("effect", `A taint's effect is NoSchedule or NoExecute, got ${JSON.stringify(effect)}`);
  return { key, value: v, effect, reason: validateReason(reason, true), by: validateBy(by) };
}

function validateReason(reason: unknown, required: boolean): string {
  const r = reason ?? "";
  if (typeof r !== "string") throw bad("reason", "A reason is a sentence (a string)");
  if (required && r.trim() === "") throw bad("reason", "Say why the device is tainted (reason): whoever reads the device's history needs it");
  if (r.length > MAX_TAINT_REASON_LENGTH) throw bad("reason", `A reason is at most ${MAX_TAINT_REASON_LENGTH} characters`);
  return r.trim();
}

function validateBy(by: unknown): string {
  if (typeof by !== "string" || by === "" || by.length > MAX_TAINT_BY_LENGTH) throw bad("by", `Who sets a taint is a name of 1 to ${MAX_TAINT_BY_LENGTH} characters`);
  return by;
}

function deviceOf(state: HostState, hostname: string, deviceUuid: string): DeviceNode {
  const device = state.devices.get(deviceUuid);
  if (!device) throw new DomainError("NOT_FOUND", `Device ${deviceUuid} not found on host ${hostname}`, "uuid");
  return device;
}

/**
 * DeviceTainted, or nothing when the device carries this very taint already (same key, effect,
 * value, author and reason). Another taint of the same key and effect is replaced.
 */
export function decideTaint(state: HostState, input: TaintInput): DeviceTainted[] {
  const { hostname, deviceUuid, at } = input;
  const device = deviceOf(state, hostname, deviceUuid);
  const valid = validateTaint(input);
  const same = device.taints.find((t) => t.key === valid.key && t.effect === valid.effect);
  if (same && same.value === valid.value && same.by === valid.by && same.reason === valid.reason) return [];
  if (!same && device.taints.length >= MAX_TAINTS_PER_DEVICE) {
    throw new DomainError("CONFLICT", `Device ${deviceUuid} carries ${MAX_TAINTS_PER_DEVICE} taints already, the most it may; remove one first`, "key");
  }
  const taint: Taint = { ...valid, at };
  return [{ type: "DeviceTainted", data: { hostname, deviceUuid, taint, status: statusOf(withTaint(device.taints, taint)), at } }];
}

/**
 * DeviceUntainted for the taint of `key` and `effect` (effect null: every taint of that key, one
 * event each). NOT_FOUND when the device carries none: a removal that removes nothing is refused.
 */
export function decideUntaint(state: HostState, input: UntaintInput): DeviceUntainted[] {
  const { hostname, deviceUuid, key, effect, at } = input;
  const device = deviceOf(state, hostname, deviceUuid);
  if (effect !== null && !isTaintEffect(effect)) throw bad("effect", `A taint's effect is NoSchedule or NoExecute, got ${JSON.stringify(effect)}`);
  const by = validateBy(input.by);
  const reason = validateReason(input.reason, false);
  const gone = device.taints.filter((t) => t.key === key && (effect === null || t.effect === effect));
  if (gone.length === 0) {
    const has = device.taints.length === 0 ? "it carries none" : `it carries ${device.taints.map(taintLabel).join(", ")}`;
    throw new DomainError("NOT_FOUND", `Device ${deviceUuid} carries no taint ${taintLabel({ key, effect })}: ${has}`, "key");
  }
  let left: readonly Taint[] = device.taints;
  return gone.map((t) => {
    left = withoutTaint(left, t.key, t.effect);
    return { type: "DeviceUntainted", data: { hostname, deviceUuid, key: t.key, effect: t.effect, by, reason, status: statusOf(left), at } };
  });
}

/**
 * Cyborg's switch over taints. MAINTAINING: the maintenance taint (NoSchedule), unless the device
 * carries it already. ENABLED: the maintenance taint removed; refused (CONFLICT, naming them) while
 * other taints would keep the device MAINTAINING, so that an `enable` never answers success and
 * leaves the device unavailable.
 */
export function decideStatus(
  state: HostState,
  input: { hostname: string; deviceUuid: string; status: DeviceStatus; by: string; reason: string; at: string },
): Array<DeviceTainted | DeviceUntainted> {
  const { hostname, deviceUuid, by, reason, at } = input;
  const device = deviceOf(state, hostname, deviceUuid);
  if (input.status === "MAINTAINING") {
    if (device.taints.some((t) => t.key === MAINTENANCE_TAINT_KEY && t.effect === "NoSchedule")) return [];
    return decideTaint(state, { hostname, deviceUuid, key: MAINTENANCE_TAINT_KEY, value: "", effect: "NoSchedule", by, reason, at });
  }
  const others = device.taints.filter((t) => t.key !== MAINTENANCE_TAINT_KEY);
  if (others.length > 0) {
    throw new DomainError(
      "CONFLICT",
      `Device ${deviceUuid} stays MAINTAINING while it carries ${others.map((t) => `${taintLabel(t)} (by ${t.by}: ${t.reason})`).join("; ")}: remove ${others.length > 1 ? "them" : "it"} with untaintDevice (or \`cyborg-es device untaint\`) first`,
      "uuid",
      { reason: "DEVICE_TAINTED", taints: others.map((t) => ({ key: t.key, value: t.value, effect: t.effect, by: t.by })) },
    );
  }
  if (device.taints.length === 0) return [];
  return decideUntaint(state, { hostname, deviceUuid, key: MAINTENANCE_TAINT_KEY, effect: null, by, reason, at });
}

/** The reason in a refused bind's details when the device carries a taint the group does not tolerate. */
export const DEVICE_TAINTED = "DEVICE_TAINTED";

/** The device's taints the tolerations do not cover: any of them keeps a new bind off the device. */
export function untoleratedTaints(device: Pick<DeviceNode, "taints">, tolerations: readonly Toleration[]): Taint[] {
  return device.taints.filter((t) => !tolerates(tolerations, t));
}

/** Refuses a new bind on a device that carries a taint its group does not tolerate (CONFLICT on deviceRpUuid). */
export function checkSchedulable(device: Pick<DeviceNode, "uuid" | "taints">, hostname: string, tolerations: readonly Toleration[]): void {
  const blocking = untoleratedTaints(device, tolerations);
  if (blocking.length === 0) return;
  throw new DomainError(
    "CONFLICT",
    `Device ${device.uuid} on host ${hostname} is tainted: ${blocking.map((t) => `${taintLabel(t)} (by ${t.by}: ${t.reason})`).join("; ")}; the ARQ's group does not tolerate ${blocking.length > 1 ? "them" : "it"}`,
    "deviceRpUuid",
    { reason: DEVICE_TAINTED, taints: blocking.map((t) => taintLabel(t)) },
  );
}
