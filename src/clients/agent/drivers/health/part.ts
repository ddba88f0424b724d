/**
 * What one health source says of one device, and how the sources combine into the health a
 * device reports. A source that cannot be read says UNKNOWN with a HEALTH_UNREADABLE reason; it
 * never fails the inventory report.
 */
import {
  MAX_HEALTH_REASONS,
  MAX_REASON_MESSAGE_LENGTH,
  worstStatus,
  type DeviceHealth,
  type HealthReason,
  type HealthStatus,
} from "../../../../domain/inventory/health.js";

export interface HealthPart {
  status: HealthStatus;
  reasons: HealthReason[];
}

export const OK_PART: HealthPart = { status: "OK", reasons: [] };

/** A source that could not be read: UNKNOWN, and why. */
export function unreadable(what: string, why: string): HealthPart {
  return { status: "UNKNOWN", reasons: [reason("HEALTH_UNREADABLE", `${what}: ${why}`)] };
}

export function reason(code: string, message: string, count?: number): HealthReason {
  const text = message.length > MAX_REASON_MESSAGE_LENGTH ? message.slice(0, MAX_REASON_MESSAGE_LENGTH - 1) + "\u2026" : message;
  return count === undefined ? { code, message: text } : { code, message: text, count };
}

/**
 * The device's health from its sources: the worst status, and every reason (at most what the
 * service takes). A source that could not be read does not hide what another found: UNKNOWN is
 * below WARNING and CRITICAL.
 */
export function combineHealth(parts: readonly HealthPart[]): DeviceHealth {
  const reasons = parts.flatMap((p) => p.reasons).slice(0, MAX_HEALTH_REASONS).map((r) => reason(r.code, r.message, r.count));
  return { status: worstStatus(...parts.map((p) => p.status)), reasons };
}
