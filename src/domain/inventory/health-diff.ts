/**
 * The health part of a host report's diff: DeviceHealthChanged when the reported health tells
 * another story than the recorded one, or the health rules judge it otherwise (a count crossed a
 * threshold). Health that holds still writes nothing, so the report's digest short-cut holds.
 */
import type { InventoryEvent, Taint } from "./events.js";
import { sameHealth, type DeviceHealth } from "./health.js";
import { HEALTH_BY_PREFIX, rulesVerdict, wantedHealthTaints, type HealthRule } from "./health-rules.js";
import { MAX_TAINT_REASON_LENGTH, statusOf, withTaint, withoutTaint } from "./taints.js";

export interface HealthSubject {
  uuid: string;
  /** The recorded health (HEALTHY for a device this report adds). */
  health: DeviceHealth;
  taints: readonly Taint[];
}

/** The events a reported health writes for this device; none when it did not change or was not reported. */
export function healthEvents(
  hostname: string,
  device: HealthSubject,
  reported: DeviceHealth | undefined,
  rules: readonly HealthRule[],
  at: string,
): InventoryEvent[] {
  if (reported === undefined || !healthChanged(device.health, reported, rules)) return [];
  return [{ type: "DeviceHealthChanged", data: { hostname, deviceUuid: device.uuid, health: reported, at } }, ...healthTaintEvents(hostname, device, reported, rules, at)];
}

/**
 * The rules applied to a new health, in the same decision: each (key, effect) a rule wants gets
 * its taint (`by: "health:<rule>"`), and a health taint no rule wants any more is removed. A taint
 * someone else set on the same key and effect (an operator's) is left as it is, and an operator
 * who removes a health taint sees it again only when the health changes again.
 */
export function healthTaintEvents(hostname: string, device: HealthSubject, health: DeviceHealth, rules: readonly HealthRule[], at: string): InventoryEvent[] {
  const wanted = wantedHealthTaints(rules, health);
  const deviceUuid = device.uuid;
  const events: InventoryEvent[] = [];
  let taints: readonly Taint[] = device.taints;
  for (const t of device.taints) {
    if (!t.by.startsWith(HEALTH_BY_PREFIX) || wanted.some((r) => r.key === t.key && r.effect === t.effect)) continue;
    taints = withoutTaint(taints, t.key, t.effect);
    const reason = `health is ${health.status} now; rule ${t.by.slice(HEALTH_BY_PREFIX.length)} no longer matches`;
    events.push({ type: "DeviceUntainted", data: { hostname, deviceUuid, key: t.key, effect: t.effect, by: t.by, reason, status: statusOf(taints), at } });
  }
  for (const rule of wanted) {
    const held = taints.find((t) => t.key === rule.key && t.effect === rule.effect);
    if (held && !held.by.startsWith(HEALTH_BY_PREFIX)) continue;
    const taint: Taint = { key: rule.key, value: health.status, effect: rule.effect, by: `${HEALTH_BY_PREFIX}${rule.name}`, reason: healthSentence(health), at };
    if (held && held.by === taint.by && held.value === taint.value && held.reason === taint.reason) continue;
    taints = withTaint(taints, taint);
    events.push({ type: "DeviceTainted", data: { hostname, deviceUuid, taint, status: statusOf(taints), at } });
  }
  return events;
}

/** "CRITICAL: uncorrectable ECC errors since the driver loaded (2); ..." */
export function healthSentence(health: DeviceHealth): string {
  const reasons = health.reasons.map((r) => (r.count === undefined ? r.message || r.code : `${r.message || r.code} (${r.count})`));
  const text = reasons.length > 0 ? `${health.status}: ${reasons.join("; ")}` : health.status;
  return text.length > MAX_TAINT_REASON_LENGTH ? text.slice(0, MAX_TAINT_REASON_LENGTH - 1) + "\u2026" : text;
}

export function healthChanged(recorded: DeviceHealth, reported: DeviceHealth, rules: readonly HealthRule[]): boolean {
  if (!sameHealth(recorded, reported)) return true;
  return rulesVerdict(rules, recorded).join(" ") !== rulesVerdict(rules, reported).join(" ");
}
