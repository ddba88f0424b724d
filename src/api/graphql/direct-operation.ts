/**
 * The common GraphQL POST run without Apollo's request pipeline, with the same answer. Apollo's
 * pipeline (query hash, document store, plugin hooks, content negotiation) was about a quarter of
 * GraphQL's CPU a request; graphql-ws already runs operations this way (graphql-ws-server.ts).
 *
 * Taken here: a JSON body `{ query, variables?, operationName?, extensions? }` sent as
 * `application/json` by a client that takes `application/json` back, whose query text parses and
 * validates (DocumentCache, shared with graphql-ws), names one query or mutation, passes the guards
 * and has variables that coerce. The operation runs through graphql-js's `execute` as Apollo runs it;
 * the answer has Apollo's status, headers and body: errors formatted by the same `formatError`,
 * 503 with Retry-After for UNAVAILABLE, an error's `extensions.http` status, `extensions.warnings`,
 * and the same metrics and span name (`ObservedOperation`). Everything else (GET, other media
 * types, persisted queries, batches, a refusal before execution) returns undefined and goes to Apollo.
 */
import { execute, getOperationAST, GraphQLError, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema } from "graphql";
import type { ObservedOperation } from "../../observability/graphql-plugin.js";
import type { ApiContext } from "./context.js";
import type { DocumentCache } from "./document-cache.js";
import { unavailableRetryAfter } from "./errors.js";
import { checkGuards } from "./guards.js";
import { withWarnings } from "./warnings.js";

export interface DirectOperations {
  schema: GraphQLSchema;
  documents: DocumentCache;
  format(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
  observe(): ObservedOperation;
}

export interface DirectAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

interface Posted {
  document: DocumentNode;
  variables: Record<string, unknown> | undefined;
  operationName: string | undefined;
}

/** Apollo's `application/json` answer type (MEDIA_TYPES.APPLICATION_JSON). */
const JSON_TYPE = "application/json; charset=utf-8";

/** The answer, or undefined for Apollo to give it (nothing has run then). */
export async function directOperation(
  d: DirectOperations,
  req: { contentType: string | undefined; accept: string | undefined; body: unknown },
  context: () => ApiContext,
): Promise<DirectAnswer | undefined> {
  if (!isJson(req.contentType) || !takesJson(req.accept)) return undefined;
  const posted = postedOperation(d, req.body);
  if (!posted) return undefined;
  const operation = getOperationAST(posted.document, posted.operationName);
  if (!operation || operation.operation === "subscription") return undefined;
  try {
    checkGuards(d.schema, posted.document, posted.operationName, posted.variables);
  } catch {
    return undefined;
  }
  const contextValue = context();
  const observed = d.observe();
  observed.resolved(operation, contextValue.correlationId);
  const result = await execute({ schema: d.schema, document: posted.document, contextValue, variableValues: posted.variables, operationName: posted.operationName });
  // No data: refused before any resolver ran (variables that do not coerce): Apollo answers it.
  if (!("data" in result) || result.data === undefined) return undefined;
  let status = 200;
  const headers = new Map<string, string>();
  let errors: GraphQLFormattedError[] | undefined;
  if (result.errors?.length) {
    observed.erred(result.errors, contextValue.correlationId);
    const retryAfter = unavailableRetryAfter(result.errors);
    if (retryAfter !== undefined) {
      status = 503;
      headers.set("retry-after", String(retryAfter));
    }
    errors = result.errors.map((e) => {
      const { formatted, http } = enrichAndFormat(d, e);
      if (http?.status !== undefined) status = http.status;
      for (const [k, v] of http?.headers ?? []) headers.set(k, v);
      return formatted;
    });
  }
  const answer: { errors?: GraphQLFormattedError[]; data?: unknown; extensions?: Record<string, unknown> } = { errors, data: result.data, extensions: result.extensions };
  withWarnings(answer, contextValue);
  observed.sent(errors);
  headers.set("content-type", JSON_TYPE);
  return { status, headers: [...headers], body: JSON.stringify({ errors: answer.errors, data: answer.data, extensions: answer.extensions }) + "\n" };
}

function postedOperation(d: DirectOperations, body: unknown): Posted | undefined {
  if (!isRecord(body)) return undefined;
  const { query, variables, operationName, extensions } = body;
  if (typeof query !== "string" || query === "") return undefined;
  if (variables != null && !isRecord(variables)) return undefined;
  if (operationName != null && typeof operationName !== "string") return undefined;
  if (extensions != null && (!isRecord(extensions) || "persistedQuery" in extensions)) return undefined;
  const document = d.documents.get(query);
  if (!isDocument(document)) return undefined;
  return { document, variables: variables ?? undefined, operationName: operationName ?? undefined };
}

/**
 * Apollo's enrichment before formatError: a code (INTERNAL_SERVER_ERROR when none), and an
 * `extensions.http` taken out of the error into the answer's status and headers.
 */
function enrichAndFormat(d: DirectOperations, error: GraphQLError): { formatted: GraphQLFormattedError; http?: { status?: number; headers?: Iterable<[string, string]> } } {
  const extensions: Record<string, unknown> = { ...error.extensions, code: error.extensions.code ?? "INTERNAL_SERVER_ERROR" };
  let http: { status?: number; headers?: Iterable<[string, string]> } | undefined;
  if (isHttpHead(extensions.http)) {
    http = extensions.http;
    delete extensions.http;
  }
  try {
    return { formatted: d.format({ ...error.toJSON(), extensions }, error), http };
  } catch {
    return { formatted: { message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR" } }, http };
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isDocument = (v: DocumentNode | readonly GraphQLError[]): v is DocumentNode => !Array.isArray(v);

function isHttpHead(x: unknown): x is { status?: number; headers?: Map<string, string> } {
  return isRecord(x) && (!("status" in x) || typeof x.status === "number") && (!("headers" in x) || x.headers instanceof Map);
}

/** `application/json`, with or without parameters (charset). */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(";");
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === "application/json";
}

/** No Accept, or one whose every type, without parameters, picks `application/json` as Apollo negotiates it. */
function takesJson(accept: string | undefined): boolean {
  if (accept === undefined || accept === "") return true;
  return accept.split(",").every((t) => {
    const type = t.trim().toLowerCase();
    return type === "application/json" || type === "*/*" || type === "application/*";
  });
}
