/**
 * How many ARQs a profile asks for (cyborg-reference 2.3): per group, the sum of its `resources:`
 * amounts, but for amounts drawn from a capacity; a group requiring trait CUSTOM_FPGA_XILINX asks for 2 x resources:FPGA (management and
 * user PF are both attached).
 */
import { DomainError } from "../shared/types.js";
import { amountClassesOf } from "../shared/amount-keys.js";
import type { ProfileGroup } from "./events.js";

export const XILINX_TRAIT_KEY = "trait:CUSTOM_FPGA_XILINX";

export function groupArqCount(group: ProfileGroup): number {
  const amount = (value: string | undefined) => (value === undefined ? 0 : Number.parseInt(value, 10) || 0);
  if (group[XILINX_TRAIT_KEY] === "required" && group["resources:FPGA"] !== undefined) {
    return 2 * amount(group["resources:FPGA"]);
  }
  // An amount drawn from a capacity (shared/amount-keys.ts) is not a count of accelerators.
  const amounts = amountClassesOf(group);
  return Object.entries(group).reduce((sum, [k, v]) => (k.startsWith("resources:") && !amounts.has(k.slice("resources:".length)) ? sum + amount(v) : sum), 0);
}

/** The group indexes an ARQ creation covers: all of them, or the one asked for. */
export function groupIndexes(groups: readonly ProfileGroup[], groupIndex?: number | null): number[] {
  if (groupIndex === undefined || groupIndex === null) return groups.map((_, i) => i);
  if (!Number.isInteger(groupIndex) || groupIndex < 0 || groupIndex >= groups.length) {
    throw new DomainError(
      "BAD_USER_INPUT",
      `groupIndex ${groupIndex} is out of range: the profile has ${groups.length} group${groups.length === 1 ? "" : "s"} (0..${groups.length - 1})`,
      "groupIndex",
    );
  }
  return [groupIndex];
}

export function arqCountFor(groups: readonly ProfileGroup[], groupIndex?: number | null): number {
  return groupIndexes(groups, groupIndex).reduce((n, i) => n + groupArqCount(groups[i]!), 0);
}
