/**
 * How many objects one request may name: the same for every front door (GraphQL over HTTP and
 * WebSocket, REST), checked before any work is done for the request.
 */
import { DomainError } from "../domain/shared/types.js";

/** ARQ uuids in one mutation, subscription or REST request. */
export const MAX_ARQ_LIST = 1000;

/** A list of ARQs to act on: not empty, at most MAX_ARQ_LIST, each named once. */
export function checkArqList(field: string, list: readonly string[]): void {
  if (list.length === 0) throw new DomainError("BAD_USER_INPUT", `${field} is empty`, field);
  if (list.length > MAX_ARQ_LIST) throw new DomainError("BAD_USER_INPUT", `at most ${MAX_ARQ_LIST} ARQs per request; ${field} names ${list.length}`, field);
  if (new Set(list).size !== list.length) throw new DomainError("BAD_USER_INPUT", `${field} names an ARQ twice`, field);
}

/** The ARQs a subscriber waits for, each once (a repeated uuid is one wait), at most MAX_ARQ_LIST. */
export function distinctArqList(field: string, list: readonly string[]): string[] {
  const distinct = [...new Set(list)];
  if (distinct.length > MAX_ARQ_LIST) throw new DomainError("BAD_USER_INPUT", `at most ${MAX_ARQ_LIST} ARQs per subscription; ${field} names ${distinct.length}`, field);
  return distinct;
}

/** The binds of one request (a bind list, or the ARQs a plug creates to bind): at least one, at most MAX_BINDINGS_PER_MUTATION. */
export function checkBindingCount(field: string, count: number, max: number): void {
  if (count === 0) throw new DomainError("BAD_USER_INPUT", "give at least one binding", field);
  if (count > max) throw new DomainError("BAD_USER_INPUT", `the request asks for ${count} binds; at most ${max} per request (MAX_BINDINGS_PER_MUTATION)`, field);
}
