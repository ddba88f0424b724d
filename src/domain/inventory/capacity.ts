/**
 * Consumable capacity (a NIC port's bandwidth, device memory) that several ARQs draw from by
 * amount. Pure; a draw never takes the sum past the total. Idempotent per ARQ.
 */
import { DomainError } from "../shared/types.js";
import type { DriverCapacity } from "./partitioning-report.js";

export interface CapacityState extends DriverCapacity {
  /** The amount each ARQ (by uuid) holds. */
  draws: ReadonlyMap<string, number>;
}

export function capacityFromReport(c: DriverCapacity, draws: ReadonlyMap<string, number> = new Map()): CapacityState {
  return { ...c, draws };
}

export function capacityUsed(c: CapacityState): number {
  let sum = 0;
  for (const v of c.draws.values()) sum += v;
  return sum;
}

export function capacityFree(c: CapacityState): number {
  return Math.max(0, c.total - capacityUsed(c));
}

export function drawCapacity(c: CapacityState, arqUuid: string, amount: number): CapacityState {
  if (!Number.isInteger(amount) || amount <= 0) throw new DomainError("BAD_USER_INPUT", `an amount of ${c.resourceClass} must be a positive whole number of ${c.unit}, got ${amount}`);
  const held = c.draws.get(arqUuid);
  if (held !== undefined) {
    if (held === amount) return c;
    throw new DomainError("CONFLICT", `ARQ ${arqUuid} already draws ${held} ${c.unit} of ${c.name}`);
  }
  if (amount > capacityFree(c)) throw new DomainError("CONFLICT", `${c.name} has ${capacityFree(c)} of ${c.total} ${c.unit} free, the request asks for ${amount}`);
  return { ...c, draws: new Map([...c.draws, [arqUuid, amount]]) };
}

export function releaseCapacity(c: CapacityState, arqUuid: string): CapacityState {
  if (!c.draws.has(arqUuid)) return c;
  const draws = new Map(c.draws);
  draws.delete(arqUuid);
  return { ...c, draws };
}
