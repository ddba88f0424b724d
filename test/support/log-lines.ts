/** A real (pino) logger whose lines a test reads back: what a component tells an operator. */
import { pino, type Logger } from "pino";

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export function capturingLogger(level = "debug"): { log: Logger; lines: LogLine[]; said(msg: string, where?: Record<string, unknown>): LogLine[] } {
  const lines: LogLine[] = [];
  // A destination whose write is synchronous: a line is readable as soon as it is logged.
  const log = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  const said = (msg: string, where: Record<string, unknown> = {}) => lines.filter((l) => l.msg === msg && Object.entries(where).every(([k, v]) => l[k] === v));
  return { log, lines, said };
}
