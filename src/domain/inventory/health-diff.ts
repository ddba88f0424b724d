/**
 * The health part of a host report's diff: DeviceHealthChanged when the reported health tells
 * another story than the recorded one, or the health rules judge it otherwise (a count crossed a
 * threshold). Health that holds still writes nothing, so the report's digest short-cut holds.
 */
import type { InventoryEvent } from "./events.js";
import { sameHealth, type DeviceHealth } from "./health.js";
import { rulesVerdict, type HealthRule } from "./health-rules.js";

export interface HealthSubject {
  uuid: string;
  /** The recorded health (HEALTHY for a device this report adds). */
  health: DeviceHealth;
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
  return [{ type: "DeviceHealthChanged", data: { hostname, deviceUuid: device.uuid, health: reported, at } }];
}

export function healthChanged(recorded: DeviceHealth, reported: DeviceHealth, rules: readonly HealthRule[]): boolean {
  if (!sameHealth(recorded, reported)) return true;
  return rulesVerdict(rules, recorded).join(" ") !== rulesVerdict(rules, reported).join(" ");
}
