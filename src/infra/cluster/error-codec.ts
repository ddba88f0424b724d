/**
 * Errors across the IPC channel keep their class, message and details: a worker's caller sees the
 * WrongExpectedRevisionError (CONFLICT, with its stream and revisions) the store threw in the
 * primary, as it would in one process. Errors of other classes keep their name, message and own
 * fields (`code` among them); the built-in TypeError and RangeError keep their class.
 */
import { DuplicateEventIdError, SequenceInterruptedError, WrongExpectedRevisionError, type AppendResult, type ExpectedRevision } from "../eventstore/port.js";

export interface EncodedError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
  cause?: EncodedError;
}

/** Own fields that a structured clone carries (no functions, no class instances but errors). */
function plainFields(err: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (key === "cause") continue;
    const t = typeof value;
    if (value === null || t === "string" || t === "number" || t === "boolean" || t === "bigint") fields[key] = value;
    else if (Array.isArray(value) || (t === "object" && Object.getPrototypeOf(value) === Object.prototype)) fields[key] = structuredClone(value);
  }
  return fields;
}

export function encodeError(err: unknown): EncodedError {
  if (!(err instanceof Error)) return { name: "Error", message: String(err), fields: {} };
  const encoded: EncodedError = { name: err.name, message: err.message, fields: plainFields(err) };
  if (err.cause !== undefined) encoded.cause = encodeError(err.cause);
  return encoded;
}

export function decodeError(e: EncodedError): Error {
  const f = e.fields;
  switch (e.name) {
    case "WrongExpectedRevisionError":
      return new WrongExpectedRevisionError(f.stream as string, f.expected as ExpectedRevision, f.actual as number | "no_stream");
    case "DuplicateEventIdError":
      return new DuplicateEventIdError(f.eventId as string, f.stream as string);
    case "SequenceInterruptedError":
      return new SequenceInterruptedError(f.appended as AppendResult[], e.cause ? decodeError(e.cause) : undefined);
  }
  const Ctor = e.name === "TypeError" ? TypeError : e.name === "RangeError" ? RangeError : Error;
  const err = new Ctor(e.message, e.cause ? { cause: decodeError(e.cause) } : undefined);
  if (err.name !== e.name) Object.defineProperty(err, "name", { value: e.name, configurable: true, writable: true });
  for (const [key, value] of Object.entries(f)) if (key !== "name" && key !== "message") (err as unknown as Record<string, unknown>)[key] = value;
  return err;
}
