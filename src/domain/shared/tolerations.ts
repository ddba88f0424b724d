/**
 * The vocabulary taints and tolerations share: a taint's effect, the form of its key and value, and
 * the `accel:tolerations` profile key. It lives here, below both aggregates, because a device
 * (inventory) carries taints and a profile group (device-profiles) tolerates them, and neither
 * aggregate imports the other.
 */
export const TAINT_EFFECTS = ["NoSchedule", "NoExecute"] as const;
/** NoSchedule: no new bind lands on the device. NoExecute: that, and its holders are asked to move. */
export type TaintEffect = (typeof TAINT_EFFECTS)[number];

/** A DNS subdomain prefix (optional) and a name, as Kubernetes' qualified names: `cyborg.openstack.org/maintenance`. */
const NAME_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE_RE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
export const MAX_TAINT_PREFIX_LENGTH = 253;

/** Why a taint key is not valid, or null when it is. */
export function taintKeyProblem(key: string): string | null {
  const slash = key.indexOf("/");
  const prefix = slash < 0 ? null : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== null && (prefix.length > MAX_TAINT_PREFIX_LENGTH || !PREFIX_RE.test(prefix))) {
    return `the prefix before "/" must be a DNS subdomain (lower-case letters, digits, "-" and ".", at most ${MAX_TAINT_PREFIX_LENGTH} characters)`;
  }
  if (!NAME_RE.test(name)) {
    return 'the name must be 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit, after an optional "<dns-prefix>/"';
  }
  return null;
}

/** Why a taint value is not valid, or null when it is ("" is valid). */
export function taintValueProblem(value: string): string | null {
  return VALUE_RE.test(value) ? null : 'a value is empty or 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit';
}

export function isTaintEffect(v: unknown): v is TaintEffect {
  return typeof v === "string" && (TAINT_EFFECTS as readonly string[]).includes(v);
}

/**
 * What a profile group tolerates (as Kubernetes DRA tolerations): a taint of `key`, with `value`
 * (null: any value), of `effect` (null: either effect).
 */
export interface Toleration {
  key: string;
  value: string | null;
  effect: TaintEffect | null;
}

/** The profile key that holds a group's tolerations. */
export const TOLERATIONS_KEY = "accel:tolerations";
export const MAX_TOLERATIONS = 16;

/**
 * Parses `accel:tolerations`: a comma-separated list of `<key>[=<value>][:<effect>]`, e.g.
 * `cyborg.openstack.org/health:NoSchedule,example.com/burn-in=gpu`. Throws an Error whose message
 * says what is wrong with which entry.
 */
export function parseTolerations(raw: string): Toleration[] {
  const entries = raw.split(",").map((e) => e.trim());
  if (entries.length > MAX_TOLERATIONS) throw new Error(`at most ${MAX_TOLERATIONS} tolerations, got ${entries.length}`);
  const out: Toleration[] = [];
  for (const entry of entries) {
    const t = parseToleration(entry);
    if (out.some((o) => o.key === t.key && o.value === t.value && o.effect === t.effect)) throw new Error(`toleration ${JSON.stringify(entry)} is given twice`);
    out.push(t);
  }
  return out;
}

function parseToleration(entry: string): Toleration {
  const form = 'each toleration is <key>[=<value>][:<effect>], effect NoSchedule or NoExecute';
  if (entry === "") throw new Error(`an empty toleration; ${form}`);
  const colon = entry.lastIndexOf(":");
  const effectPart = colon < 0 ? null : entry.slice(colon + 1);
  const rest = colon < 0 ? entry : entry.slice(0, colon);
  if (effectPart !== null && !isTaintEffect(effectPart)) throw new Error(`toleration ${JSON.stringify(entry)}: unknown effect ${JSON.stringify(effectPart)}; ${form}`);
  const eq = rest.indexOf("=");
  const key = eq < 0 ? rest : rest.slice(0, eq);
  const value = eq < 0 ? null : rest.slice(eq + 1);
  const keyProblem = taintKeyProblem(key);
  if (keyProblem) throw new Error(`toleration ${JSON.stringify(entry)}: key ${JSON.stringify(key)} is not valid: ${keyProblem}`);
  const valueProblem = value === null ? null : taintValueProblem(value);
  if (valueProblem) throw new Error(`toleration ${JSON.stringify(entry)}: value ${JSON.stringify(value)} is not valid: ${valueProblem}`);
  return { key, value, effect: effectPart };
}

/** The group's tolerations ([] when it gives none). A stored group was validated; a bad one tolerates nothing (fails closed). */
export function tolerationsOf(group: Readonly<Record<string, string>>): Toleration[] {
  const raw = group[TOLERATIONS_KEY];
  if (raw === undefined) return [];
  try {
    return parseTolerations(raw);
  } catch {
    return [];
  }
}

/** Whether one of the tolerations matches a taint of this key, value and effect. */
export function tolerates(tolerations: readonly Toleration[], taint: { key: string; value: string; effect: TaintEffect }): boolean {
  return tolerations.some((t) => t.key === taint.key && (t.value === null || t.value === taint.value) && (t.effect === null || t.effect === taint.effect));
}

/** A toleration as `accel:tolerations` writes it: `<key>[=<value>][:<effect>]`. */
export function tolerationText(t: Toleration): string {
  return `${t.key}${t.value === null ? "" : `=${t.value}`}${t.effect === null ? "" : `:${t.effect}`}`;
}
