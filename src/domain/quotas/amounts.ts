/** What one ARQ counts against its project's quota. */
import type { Amounts } from "./events.js";

/** The pseudo-class counting ARQs themselves (ARQ_QUOTA_PER_PROJECT is its default limit). */
export const ARQS_CLASS = "ARQS";

/** An ARQ's amounts: one ARQS, plus each `resources:<CLASS>` of its group. */
export function arqAmounts(group: Readonly<Record<string, string>>): Amounts {
  const amounts: Record<string, number> = { [ARQS_CLASS]: 1 };
  for (const [key, value] of Object.entries(group)) {
    if (!key.startsWith("resources:")) continue;
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) continue;
    const cls = key.slice("resources:".length);
    amounts[cls] = (amounts[cls] ?? 0) + n;
  }
  return amounts;
}
