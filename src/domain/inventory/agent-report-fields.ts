/**
 * The fields an agent reports about work it ran for the host stream (a clean, a partition made or
 * destroyed): the command line, how long it took, and a reason or digest, checked once.
 */
import { DomainError } from "../shared/types.js";

/** The driver's command line: 1 to 64 strings (`allowEmpty`: nothing had to run, e.g. a partition already gone). */
export function commandLine(value: unknown, allowEmpty = false): string[] {
  if (!Array.isArray(value) || (value.length === 0 && !allowEmpty) || value.length > 64 || !value.every((v) => typeof v === "string" && v.length <= 4096)) {
    throw new DomainError("BAD_USER_INPUT", "command must be the driver's command line: 1 to 64 strings", "command");
  }
  return [...value];
}

export function duration(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new DomainError("BAD_USER_INPUT", "durationMs must be a number >= 0", "durationMs");
  return Math.round(value);
}

/** A non-empty string, cut to 2000 characters. */
export function text(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim().length === 0) throw new DomainError("BAD_USER_INPUT", `${field} must be a non-empty string`, field);
  return value.length > 2000 ? `${value.slice(0, 1997)}...` : value;
}

/** A failed step's command line and duration, when the agent ran one (each null when not reported). */
export function ranStep(d: { command?: unknown; durationMs?: unknown }, allowEmpty = false): { command: string[] | null; durationMs: number | null } {
  return { command: d.command == null ? null : commandLine(d.command, allowEmpty), durationMs: d.durationMs == null ? null : duration(d.durationMs) };
}
