import { pino, type Logger } from "pino";

export type { Logger };

/** Structured JSON logs on stdout (pino). */
export function createLogger(level: string, name = "cyborg-es"): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** Awaits `work`, calling `report` (a log line) every `everyMs` until it settles: a long start is not a silent one. */
export async function reportWhile<T>(work: Promise<T>, everyMs: number, report: () => void): Promise<T> {
  const timer = setInterval(report, everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
