/**
 * HEALTH_RULES_FILE: the health rules (domain/inventory/health-rules.ts) as a JSON file, read once
 * at start. A file that cannot be read or holds a bad rule stops the service with the reason: a
 * rule silently dropped would leave failing devices untainted.
 */
import { readFileSync } from "node:fs";
import { DEFAULT_HEALTH_RULES, parseHealthRules, type HealthRule } from "../domain/inventory/health-rules.js";
import { DomainError } from "../domain/shared/types.js";

/** The rules in the file, or the documented default when no file is named. Throws an Error whose message names the file and the fault. */
export function loadHealthRules(path: string | undefined): readonly HealthRule[] {
  if (path === undefined) return DEFAULT_HEALTH_RULES;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`HEALTH_RULES_FILE=${JSON.stringify(path)}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`HEALTH_RULES_FILE=${JSON.stringify(path)}: not JSON (${(err as Error).message})`);
  }
  try {
    return parseHealthRules(doc);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    throw new Error(`HEALTH_RULES_FILE=${JSON.stringify(path)}: ${err.field ?? "rules"}: ${err.message}`);
  }
}
