/**
 * A Nova stand-in (bench/lib/nova-server.ts) that records os-server-external-events calls and can
 * be told to fail and recover, and a logger whose lines the tests can read.
 */
import { pino, type Logger } from "pino";

export { startNovaStandIn, type NovaCall, type NovaStandIn, type StandInEvent } from "../../bench/lib/nova-server.js";

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

/** A pino logger (debug and up) that keeps its lines. */
export function memoryLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level: "debug" }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { log, lines };
}
