/**
 * A device's health as its driver reports it with the inventory: a status and the reasons for it
 * (ECC errors, XID events, AER counters, ...). The host decider records it (DeviceHealthChanged)
 * only when it changed in a way that matters (sameHealth), so a host whose health holds still
 * writes nothing, and the health rules (health-rules.ts) turn it into taints.
 */
import { DomainError } from "../shared/types.js";

export const HEALTH_STATUSES = ["OK", "WARNING", "CRITICAL", "UNKNOWN"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export interface HealthReason {
  /** What kind of trouble: one of HEALTH_REASON_CODES, or a driver's own code of the same form. */
  code: string;
  /** A sentence a person reads; it names the trouble, not a count that moves (that is `count`). */
  message: string;
  /** How many (errors, events, pages) the driver counted, where it counts. */
  count?: number;
}

export interface DeviceHealth {
  status: HealthStatus;
  reasons: HealthReason[];
}

/** The codes the drivers shipped with the service write (docs/drivers.md, "Health"). */
export const HEALTH_REASON_CODES = [
  "ECC_VOLATILE_UNCORRECTABLE",
  "ECC_AGGREGATE_UNCORRECTABLE",
  "RETIRED_PAGES_PENDING",
  "ROW_REMAP_FAILURE",
  "ROW_REMAP_PENDING",
  "XID",
  "GPU_LOST",
  "AER_FATAL",
  "AER_NONFATAL",
  "AER_CORRECTABLE",
  "FPGA_CATFATAL",
  "FPGA_FME_ERRORS",
  "FPGA_PORT_ERRORS",
  "FPGA_NONFATAL",
  "FPGA_PCIE_ERRORS",
  "INJECTED",
  "HEALTH_UNREADABLE",
] as const;

/** A device that never reported health, or reported nothing wrong. */
export const HEALTHY: DeviceHealth = Object.freeze({ status: "OK", reasons: [] }) as DeviceHealth;

export const MAX_HEALTH_REASONS = 32;
export const MAX_REASON_MESSAGE_LENGTH = 255;
export const REASON_CODE_RE = /^[A-Z][A-Z0-9_]{0,63}$/;

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

/**
 * A reported health, normalised (reasons ordered by code, then message; a count only where one
 * was given), or null when the report carries none (an agent from before health was reported):
 * the recorded health then stays as it is.
 */
export function validateHealth(raw: unknown, field: string): DeviceHealth | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) throw bad(field, "health must be an object {status, reasons}");
  const { status, reasons } = raw as Record<string, unknown>;
  if (typeof status !== "string" || !(HEALTH_STATUSES as readonly string[]).includes(status)) {
    throw bad(`${field}.status`, `health status must be one of ${HEALTH_STATUSES.join(", ")}, got ${JSON.stringify(status)}`);
  }
  if (!Array.isArray(reasons)) throw bad(`${field}.reasons`, "health reasons must be a list (empty when there is nothing to say)");
  if (reasons.length > MAX_HEALTH_REASONS) throw bad(`${field}.reasons`, `at most ${MAX_HEALTH_REASONS} health reasons per device; got ${reasons.length}`);
  const out = reasons.map((r, i) => validateReason(r, `${field}.reasons[${i}]`));
  return { status: status as HealthStatus, reasons: out.sort(byCodeThenMessage) };
}

function validateReason(raw: unknown, field: string): HealthReason {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad(field, "each health reason must be an object {code, message, count?}");
  const { code, message, count } = raw as Record<string, unknown>;
  if (typeof code !== "string" || !REASON_CODE_RE.test(code)) {
    throw bad(`${field}.code`, `a reason code is 1 to 64 upper-case letters, digits and "_", starting with a letter (such as ECC_VOLATILE_UNCORRECTABLE); got ${JSON.stringify(code)}`);
  }
  if (typeof message !== "string" || message.length > MAX_REASON_MESSAGE_LENGTH) {
    throw bad(`${field}.message`, `a reason message is a string of at most ${MAX_REASON_MESSAGE_LENGTH} characters`);
  }
  if (count === undefined || count === null) return { code, message };
  if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0) {
    throw bad(`${field}.count`, `a reason count is an integer >= 0, got ${JSON.stringify(count)}`);
  }
  return { code, message, count };
}

function byCodeThenMessage(a: HealthReason, b: HealthReason): number {
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

/**
 * Whether two healths tell the same story: the same status and the same reasons (code and
 * message). Counts are left out: a counter that creeps up (correctable AER errors) would otherwise
 * cost an event per report; a count that crosses a rule's threshold is a change the rules see
 * (health-rules.ts, rulesVerdict).
 */
export function sameHealth(a: DeviceHealth, b: DeviceHealth): boolean {
  if (a.status !== b.status || a.reasons.length !== b.reasons.length) return false;
  return a.reasons.every((r, i) => r.code === b.reasons[i]!.code && r.message === b.reasons[i]!.message);
}

const SEVERITY: Record<HealthStatus, number> = { OK: 0, UNKNOWN: 1, WARNING: 2, CRITICAL: 3 };

/** The worse of the statuses (CRITICAL > WARNING > UNKNOWN > OK): how drivers combine their sources. */
export function worstStatus(...statuses: HealthStatus[]): HealthStatus {
  return statuses.reduce<HealthStatus>((w, s) => (SEVERITY[s] > SEVERITY[w] ? s : w), "OK");
}

/** The sum of the counts of the reasons with this code (a reason without a count counts once); 0 if none. */
export function reasonCount(health: DeviceHealth, code: string): number {
  let n = 0;
  for (const r of health.reasons) if (r.code === code) n += r.count ?? 1;
  return n;
}
