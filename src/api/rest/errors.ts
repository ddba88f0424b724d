/**
 * Errors in Cyborg's envelope: `{"error_message": "<JSON of {faultcode, faultstring, debuginfo}>"}`
 * (WSME's fault wrapped by ParsableErrorMiddleware, cyborg-reference 1.1). The inner object also
 * carries our stable `code` and, for bad input, the offending `field`: clients that read only
 * `faultstring` (openstacksdk, Nova) are unaffected. Never a stack trace.
 */
import { DomainError } from "../../domain/shared/types.js";
import { DuplicateEventIdError, WrongExpectedRevisionError } from "../../infra/eventstore/port.js";
import { ReadStoreUnavailableError } from "../../infra/readstore/port.js";
import { UNAVAILABLE_RETRY_AFTER_S } from "../services.js";

export type RestErrorCode =
  | "BAD_USER_INPUT"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "NOT_ACCEPTABLE"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "LOCKED"
  | "UNSUPPORTED_OPERATION"
  | "NOT_IMPLEMENTED"
  | "UNAVAILABLE"
  | "RATE_LIMITED"
  | "QUOTA_EXCEEDED"
  | "PROFILE_DISABLED"
  | "PROGRAMMING_FAILED"
  | "INTERNAL_SERVER_ERROR";

const STATUS: Record<RestErrorCode, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  LOCKED: 423,
  UNSUPPORTED_OPERATION: 409,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 403,
  PROFILE_DISABLED: 409,
  PROGRAMMING_FAILED: 502,
  INTERNAL_SERVER_ERROR: 500,
};

export class RestError extends Error {
  readonly status: number;
  constructor(
    readonly code: RestErrorCode,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
    /** What a refusal says beyond its message (a refused bind's explanation: docs/scheduling.md), as GraphQL's extensions.details. */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "RestError";
    this.status = STATUS[code];
  }
}

export const badRequest = (message: string, field?: string) => new RestError("BAD_USER_INPUT", message, field);
export const notFound = (message: string) => new RestError("NOT_FOUND", message);
export const forbidden = (message: string) => new RestError("FORBIDDEN", message);

/** A command's refusal or a store conflict as a REST error; undefined for anything unexpected. */
export function fromCommandError(err: unknown): RestError | undefined {
  if (err instanceof RestError) return err;
  if (err instanceof DomainError) return new RestError(err.code, err.message, err.field, {}, err.details);
  if (err instanceof ReadStoreUnavailableError) return new RestError("UNAVAILABLE", err.message, undefined, { "retry-after": String(UNAVAILABLE_RETRY_AFTER_S) });
  if (err instanceof WrongExpectedRevisionError || err instanceof DuplicateEventIdError) {
    return new RestError("CONFLICT", `${err.message}; try again`);
  }
  return undefined;
}

/**
 * A command's refusal with its field named as the REST body names it (the application names
 * GraphQL's arguments: `bindings[0].deviceRpUuid` is `<arq uuid>/device_rp_uuid` in a PATCH).
 * Anything else goes on unchanged.
 */
export async function inRestTerms<T>(run: () => Promise<T>, restField: (field: string) => string | undefined): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof DomainError) || err.field === undefined) throw err;
    const field = restField(err.field);
    if (field === undefined) throw err;
    // The field's own name in the message too ("instanceUuid is required" reads "instance_uuid is required").
    const own = /(\w+)$/.exec(err.field)?.[1];
    const restOwn = field.includes("/") ? field.slice(field.lastIndexOf("/") + 1) : undefined;
    let message = err.message.split(err.field).join(field);
    if (own && restOwn) message = message.replace(new RegExp(`\\b${own}\\b`, "g"), restOwn);
    throw new RestError(err.code, message, field, {}, err.details);
  }
}

export const INTERNAL = new RestError("INTERNAL_SERVER_ERROR", "internal error; the server log has the details");

/** The response body for an error. */
export function envelope(err: RestError): string {
  const fault: Record<string, unknown> = {
    faultcode: err.status >= 500 ? "Server" : "Client",
    faultstring: err.message,
    debuginfo: null,
    code: err.code,
  };
  if (err.field) fault.field = err.field;
  if (err.details) fault.details = err.details;
  return JSON.stringify({ error_message: JSON.stringify(fault) });
}
