import type { ApolloServerPlugin } from "@apollo/server";
import { GraphQLError, Kind, type GraphQLFormattedError } from "graphql";
import { DomainError } from "../../domain/shared/types.js";
import { DuplicateEventIdError, WrongExpectedRevisionError } from "../../infra/eventstore/port.js";
import { ReadStoreUnavailableError } from "../../infra/readstore/port.js";
import { UNAVAILABLE_RETRY_AFTER_S } from "../services.js";
import { DEFAULT_GUARDS, isTokenLimit } from "./guards.js";

export type ErrorCode = "BAD_USER_INPUT" | "NOT_FOUND" | "CONFLICT" | "UNAUTHENTICATED" | "FORBIDDEN" | "INTERNAL_SERVER_ERROR";


const originalOf = (error: unknown) => (error instanceof GraphQLError ? (error.originalError ?? error) : error);

export function apiError(code: ErrorCode, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}

export const unauthenticated = () =>
  apiError("UNAUTHENTICATED", "missing or unknown bearer token: send `Authorization: Bearer <token>`");
export const forbidden = (what: string) => apiError("FORBIDDEN", `your token's roles do not allow ${what}`);
export const badInput = (field: string, message: string) => apiError("BAD_USER_INPUT", message, { field });

/** Codes GraphQL itself or our layers set that may reach a client as they are. */
const CLIENT_CODES = new Set([
  "BAD_USER_INPUT",
  "NOT_FOUND",
  "CONFLICT",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_REQUEST",
  "PERSISTED_QUERY_NOT_FOUND",
  "OPERATION_RESOLUTION_FAILURE",
  "QUERY_TOO_COMPLEX",
  "RATE_LIMITED",
  "TOO_MANY_SUBSCRIPTIONS",
  "QUOTA_EXCEEDED",
  "PROFILE_DISABLED",
  "UNAVAILABLE",
  "TIMEOUT",
]);

/**
 * Apollo's formatError: domain errors keep their code and field, store conflicts become CONFLICT,
 * anything unexpected becomes a generic INTERNAL_SERVER_ERROR (logged, never a stack trace).
 */
export function formatError(onInternal: (err: unknown) => void) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = originalOf(error);
    const base = { message: formatted.message, locations: formatted.locations, path: formatted.path };
    if (original instanceof DomainError) {
      const extensions: Record<string, unknown> = { code: original.code };
      if (original.field) extensions.field = original.field;
      if (original.details) extensions.details = original.details;
      return { ...base, message: original.message, extensions };
    }
    if (original instanceof ReadStoreUnavailableError) {
      return { ...base, message: original.message, extensions: { code: "UNAVAILABLE", retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S } };
    }
    if (original instanceof WrongExpectedRevisionError || original instanceof DuplicateEventIdError) {
      return { ...base, message: original.message, extensions: { code: "CONFLICT" } };
    }
    const code = formatted.extensions?.code;
    if (code === "GRAPHQL_PARSE_FAILED" && isTokenLimit(formatted)) {
      return { ...base, extensions: { code: "QUERY_TOO_COMPLEX", limit: DEFAULT_GUARDS.maxTokens } };
    }
    if (typeof code === "string" && CLIENT_CODES.has(code)) {
      const { stacktrace: _drop, http: _http, ...rest } = formatted.extensions ?? {};
      return { ...base, extensions: rest };
    }
    // Variable coercion errors ("Variable $x got invalid value") carry no code from graphql-js
    // (Apollo adds BAD_USER_INPUT over HTTP, graphql-ws does not); a scalar's own refusal is kept
    // as originalError, and the error points at the variable's definition.
    if (error instanceof GraphQLError && !error.path && (!error.originalError || error.nodes?.some((n) => n.kind === Kind.VARIABLE_DEFINITION))) {
      return { ...base, extensions: { code: "BAD_USER_INPUT" } };
    }
    onInternal(original);
    return { ...base, message: "internal error; the server log has the details", extensions: { code: "INTERNAL_SERVER_ERROR" } };
  };
}

/**
 * An answer that holds an UNAVAILABLE error is HTTP 503 with Retry-After (Apollo answers 200 for
 * errors raised while executing), so that load balancers and clients back off.
 */
export const unavailableStatusPlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, response }) {
        const retryAfter = unavailableRetryAfter(errors);
        if (retryAfter === undefined) return;
        response.http.status = 503;
        response.http.headers.set("retry-after", String(retryAfter));
      },
    };
  },
};

/** The Retry-After (seconds) of an answer with these errors, when one of them is UNAVAILABLE or TIMEOUT. */
export function unavailableRetryAfter(errors: readonly GraphQLError[]): number | undefined {
  const unavailable = errors.filter((e) => originalOf(e) instanceof ReadStoreUnavailableError || e.extensions?.code === "TIMEOUT" || e.extensions?.code === "UNAVAILABLE");
  if (unavailable.length === 0) return undefined;
  // The longest wait any of them asks for (a busy service spreads its callers out: report-admission.ts).
  return Math.max(...unavailable.map((e) => (typeof e.extensions?.retryAfterSeconds === "number" ? e.extensions.retryAfterSeconds : UNAVAILABLE_RETRY_AFTER_S)));
}
