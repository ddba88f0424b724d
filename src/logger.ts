import { pino, type Logger } from "pino";

export type { Logger };

/** Structured JSON logs on stdout (pino). */
export function createLogger(level: string, name = "cyborg-es"): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
