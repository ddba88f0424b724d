/**
 * Closing the books of a host stream (docs/operations.md, "Retention"): a host stream never ends,
 * so it is cut into periods, each starting with HostBooksClosed, which carries the host's whole
 * state. A host is folded from its latest summary; the events of periods that closed long ago may
 * leave the live log. Folding a summary and the events after it gives the state folded from the
 * first event (test/domain/inventory/books.property.test.ts).
 */
import { DomainError } from "../shared/types.js";
import type { HostBooksClosed } from "./events.js";
import type { HostState } from "./host-tree.js";

/** When a period closes: HOST_PERIOD_EVENTS and HOST_PERIOD_DAYS. */
export interface BooksPolicy {
  /** Events a period holds at most (0: periods never close). */
  maxEvents: number;
  /** Days a period lasts at most, once it holds an event after its start (0: no limit by age). */
  maxDays: number;
}

export const DEFAULT_BOOKS_POLICY: BooksPolicy = { maxEvents: 1000, maxDays: 30 };

const DAY_MS = 86_400_000;

/** The events of the current period: since the latest summary (itself not counted), or since the stream's start. */
export const eventsInPeriod = (state: HostState, revision: number): number => (state.books ? revision - state.books.revision : revision + 1);

/** Whether the period of a host at `revision` closes at `at`. */
export function booksDue(state: HostState, revision: number, at: string, policy: BooksPolicy): boolean {
  if (policy.maxEvents <= 0 || state.hostname === null) return false;
  const events = eventsInPeriod(state, revision);
  if (events >= policy.maxEvents) return true;
  const began = Date.parse(state.books?.at ?? state.firstAt ?? "");
  const now = Date.parse(at);
  return policy.maxDays > 0 && events > 0 && Number.isFinite(began) && Number.isFinite(now) && now - began >= policy.maxDays * DAY_MS;
}

/** The summary that closes the period of a host at `revision`: appended at revision + 1. */
export function closeBooks(state: HostState, revision: number, at: string): HostBooksClosed {
  if (state.hostname === null) throw new DomainError("NOT_FOUND", "a host that reported nothing has no books to close");
  return { type: "HostBooksClosed", data: { hostname: state.hostname, revision: revision + 1, state: encodeHostState(state), at } };
}

/** The state a summary starts its period with. */
export function openBooks(data: HostBooksClosed["data"]): HostState {
  const state = decodeHostState(data.state);
  return { ...state, books: { revision: data.revision, at: data.at } };
}

// Maps become {"$map": [[key, value], ...]} (their order kept); a plain object holding either tag
// as a key of its own is wrapped in {"$obj": ...}, so driver-reported JSON is never mistaken for a map.
const MAP = "$map";
const OBJ = "$obj";

export function encodeHostState(state: HostState): unknown {
  return encode(state);
}

export function decodeHostState(encoded: unknown): HostState {
  const state = decode(encoded) as HostState;
  if (typeof state !== "object" || state === null || !(state.devices instanceof Map) || !(state.allocations instanceof Map)) {
    throw new Error("a HostBooksClosed event does not hold a host's state: the stream cannot be folded from it");
  }
  return state;
}

function encode(v: unknown): unknown {
  if (v instanceof Map) return { [MAP]: [...v].map(([k, x]) => [k, encode(x)]) };
  if (Array.isArray(v)) return v.map(encode);
  if (typeof v === "object" && v !== null) {
    const fields: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) fields[k] = encode(x);
    return MAP in fields || OBJ in fields ? { [OBJ]: fields } : fields;
  }
  return v;
}

function decode(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decode);
  if (typeof v !== "object" || v === null) return v;
  const o = v as Record<string, unknown>;
  if (MAP in o) return new Map((o[MAP] as Array<[unknown, unknown]>).map(([k, x]) => [k, decode(x)]));
  const fields = OBJ in o ? (o[OBJ] as Record<string, unknown>) : o;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(fields)) out[k] = decode(x);
  return out;
}
