/**
 * Health rules: which reported health taints a device, with which effect. A rule matches a
 * device's health by its status, or by a reason code with an optional threshold on the reason's
 * count; the device then carries the rule's taint, `by: "health:<rule name>"`, until a later
 * health no longer matches. The rules are data (HEALTH_RULES_FILE, docs/configuration.md) handed
 * to the host decider with each report; they are applied in the same decision as the report.
 */
import { DomainError } from "../shared/types.js";
import { HEALTH_STATUSES, REASON_CODE_RE, reasonCount, type DeviceHealth, type HealthStatus } from "./health.js";
import { taintKeyProblem, type TaintEffect } from "../shared/tolerations.js";
import { HEALTH_TAINT_KEY } from "./taints.js";

export type HealthRuleEffect = TaintEffect;
export { HEALTH_TAINT_KEY };

export type HealthRuleMatch = { status: HealthStatus } | { code: string; minCount: number };

export interface HealthRule {
  /** Names the rule in the taint's `by` ("health:<name>"): lower-case letters, digits and "-". */
  name: string;
  when: HealthRuleMatch;
  effect: HealthRuleEffect;
  /** The taint's key (HEALTH_TAINT_KEY unless the rule names another). */
  key: string;
}

export const HEALTH_BY_PREFIX = "health:";

/**
 * The default: a CRITICAL device is drained (NoExecute: its holders are asked to move), a WARNING
 * one takes no new binds (NoSchedule). UNKNOWN (a driver that could not read health) taints nothing.
 */
export const DEFAULT_HEALTH_RULES: readonly HealthRule[] = Object.freeze([
  { name: "critical", when: { status: "CRITICAL" }, effect: "NoExecute", key: HEALTH_TAINT_KEY },
  { name: "warning", when: { status: "WARNING" }, effect: "NoSchedule", key: HEALTH_TAINT_KEY },
]);

export const MAX_HEALTH_RULES = 64;
const RULE_NAME_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
const EFFECTS: readonly HealthRuleEffect[] = ["NoSchedule", "NoExecute"];

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

/** Whether the rule matches this health. */
export function ruleMatches(rule: HealthRule, health: DeviceHealth): boolean {
  if ("status" in rule.when) return health.status === rule.when.status;
  return reasonCount(health, rule.when.code) >= rule.when.minCount;
}

/** The names of the rules this health matches, in rule order: two healths with the same verdict taint alike. */
export function rulesVerdict(rules: readonly HealthRule[], health: DeviceHealth): string[] {
  return rules.filter((r) => ruleMatches(r, health)).map((r) => r.name);
}

/**
 * The taint each (key, effect) should carry for this health: the first matching rule of each,
 * so that two rules on one key and effect give one taint.
 */
export function wantedHealthTaints(rules: readonly HealthRule[], health: DeviceHealth): HealthRule[] {
  const seen = new Set<string>();
  const out: HealthRule[] = [];
  for (const rule of rules) {
    const slot = `${rule.key}\u0000${rule.effect}`;
    if (seen.has(slot) || !ruleMatches(rule, health)) continue;
    seen.add(slot);
    out.push(rule);
  }
  return out;
}

/** A rules document (the JSON of HEALTH_RULES_FILE): `{"rules": [...]}` or the list itself. */
export function parseHealthRules(raw: unknown): HealthRule[] {
  const list = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>).rules : raw;
  if (!Array.isArray(list)) throw bad("rules", 'health rules must be a list, or an object {"rules": [...]}');
  if (list.length > MAX_HEALTH_RULES) throw bad("rules", `at most ${MAX_HEALTH_RULES} health rules; got ${list.length}`);
  const names = new Set<string>();
  return list.map((r, i) => {
    const rule = parseRule(r, `rules[${i}]`);
    if (names.has(rule.name)) throw bad(`rules[${i}].name`, `two health rules are named ${rule.name}: each taint names its rule, so names must differ`);
    names.add(rule.name);
    return rule;
  });
}

function parseRule(raw: unknown, field: string): HealthRule {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad(field, "each health rule must be an object {name, when, effect, key?}");
  const { name, when, effect, key } = raw as Record<string, unknown>;
  if (typeof name !== "string" || !RULE_NAME_RE.test(name)) throw bad(`${field}.name`, `a rule name is 1 to 63 lower-case letters, digits and "-"; got ${JSON.stringify(name)}`);
  if (typeof effect !== "string" || !(EFFECTS as readonly string[]).includes(effect)) {
    throw bad(`${field}.effect`, `effect must be NoSchedule or NoExecute, got ${JSON.stringify(effect)}`);
  }
  if (key !== undefined && (typeof key !== "string" || taintKeyProblem(key) !== null)) {
    throw bad(`${field}.key`, `taint key ${JSON.stringify(key)} is not valid: ${typeof key === "string" ? taintKeyProblem(key) : "it is not a string"}`);
  }
  return { name, when: parseMatch(when, `${field}.when`), effect: effect as HealthRuleEffect, key: (key as string | undefined) ?? HEALTH_TAINT_KEY };
}

function parseMatch(raw: unknown, field: string): HealthRuleMatch {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad(field, 'when must be {"status": ...} or {"code": ..., "minCount"?: ...}');
  const { status, code, minCount, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw bad(`${field}.${unknown[0]}`, `unknown condition ${unknown[0]}; a rule matches on status, or on code with minCount`);
  if ((status === undefined) === (code === undefined)) throw bad(field, "a rule matches either a status or a reason code, not both and not neither");
  if (status !== undefined) {
    if (minCount !== undefined) throw bad(`${field}.minCount`, "minCount goes with a reason code, not with a status");
    if (typeof status !== "string" || !(HEALTH_STATUSES as readonly string[]).includes(status)) {
      throw bad(`${field}.status`, `status must be one of ${HEALTH_STATUSES.join(", ")}, got ${JSON.stringify(status)}`);
    }
    return { status: status as HealthStatus };
  }
  if (typeof code !== "string" || !REASON_CODE_RE.test(code)) throw bad(`${field}.code`, `code must be a reason code such as XID or AER_CORRECTABLE, got ${JSON.stringify(code)}`);
  if (minCount !== undefined && (typeof minCount !== "number" || !Number.isSafeInteger(minCount) || minCount < 1)) {
    throw bad(`${field}.minCount`, `minCount is an integer >= 1 (the reason's count at which the rule taints), got ${JSON.stringify(minCount)}`);
  }
  return { code, minCount: (minCount as number | undefined) ?? 1 };
}
