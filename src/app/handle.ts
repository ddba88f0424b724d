/**
 * The generic command handler: read the stream, fold it with evolve, decide, append with the
 * expected revision, and retry on a revision conflict (bounded, with small jittered backoff).
 */
import { fold, type Decider } from "../domain/shared/decider.js";
import { DomainError, type CommandContext } from "../domain/shared/types.js";
import { WrongExpectedRevisionError, type EventStore, type NewEvent, type RecordedEvent } from "../infra/eventstore/port.js";
import type { AggregateCache } from "./aggregate-cache.js";
import type { StreamLocks } from "./stream-locks.js";
import { newEventId } from "./event-ids.js";

export interface DomainEventShape {
  type: string;
  data: unknown;
}

export interface Loaded<S> {
  state: S;
  /** The stream's revision, -1 when it does not exist. */
  revision: number;
  /** The log position of the stream's last event, null when it does not exist. */
  position: bigint | null;
}

export interface HandleResult<S, E> extends Loaded<S> {
  /** The events appended (none when the decision was a no-op). */
  events: E[];
  /** The state decide saw. */
  previousState: S;
}

export interface HandleOptions {
  cache?: AggregateCache;
  /** Serialises the process's writers to the stream (see stream-locks.ts). */
  locks?: StreamLocks;
  maxAttempts?: number;
  /** The event type a fold may start from (the aggregate's summary): see readLatestPeriod. */
  periodStart?: string;
}

/** A command, or a function of the current state giving one (recomputed on every attempt). */
export type CommandSource<C, S> = C | ((state: S) => C | Promise<C>);

/** The stream's state: from the cached state and the events after it, loaded in turn with the process's other loads of it (AggregateCache.inTurn). */
export async function loadAggregate<C, S, E extends DomainEventShape>(
  store: EventStore,
  streamName: string,
  decider: Decider<C, S, E>,
  cache?: AggregateCache,
  periodStart?: string,
): Promise<Loaded<S>> {
  return cache ? cache.inTurn(streamName, () => loadFrom(store, streamName, decider, cache, periodStart)) : loadFrom(store, streamName, decider, undefined, periodStart);
}

async function loadFrom<C, S, E extends DomainEventShape>(store: EventStore, streamName: string, decider: Decider<C, S, E>, cache?: AggregateCache, periodStart?: string): Promise<Loaded<S>> {
  const cached = cache?.get(streamName);
  let state = cached ? (cached.state as S) : decider.initialState();
  let revision = cached ? cached.revision : -1;
  let position = cached ? cached.position : null;
  const events = !cached && periodStart ? await readLatestPeriod(store, streamName, periodStart) : await store.readStream(streamName, { fromRevision: revision + 1 });
  for (const e of events) {
    state = decider.evolve(state, { type: e.type, data: e.data } as E);
    revision = e.revision;
    position = e.position;
  }
  if (events.length > 0) cache?.set(streamName, { state, revision, position });
  return { state, revision, position };
}

/** Events read backwards per page while looking for a stream's latest period start. */
const PERIOD_PAGE = 256;

/**
 * The stream from its latest event of type `periodStart` (a summary that carries the whole state,
 * as HostBooksClosed does) to its end, in order; the whole stream when it holds none. Read
 * backwards a page at a time, so a long stream costs one period, not its history.
 */
export async function readLatestPeriod(store: EventStore, streamName: string, periodStart: string): Promise<RecordedEvent[]> {
  const pages: RecordedEvent[][] = [];
  for (let from: number | undefined; ; ) {
    const page = await store.readStream(streamName, { direction: "backwards", fromRevision: from, maxCount: PERIOD_PAGE });
    const start = page.findIndex((e) => e.type === periodStart);
    pages.push(start >= 0 ? page.slice(0, start + 1) : page);
    const last = page.at(-1);
    if (start >= 0 || page.length < PERIOD_PAGE || !last || last.revision === 0) break;
    from = last.revision - 1;
  }
  return pages.flat().reverse();
}

export async function handleCommand<C, S, E extends DomainEventShape>(
  store: EventStore,
  streamName: string,
  decider: Decider<C, S, E>,
  command: CommandSource<C, S>,
  ctx: CommandContext,
  options: HandleOptions = {},
): Promise<HandleResult<S, E>> {
  if (options.locks) return options.locks.run([streamName], () => handleCommand(store, streamName, decider, command, ctx, { ...options, locks: undefined }));
  const maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    const loaded = await loadAggregate(store, streamName, decider, options.cache, options.periodStart);
    const { state, revision } = loaded;
    const cmd = typeof command === "function" ? await (command as (s: S) => C | Promise<C>)(state) : command;
    const events = decider.decide(cmd, state);
    if (events.length === 0) return { ...loaded, events, previousState: state };
    try {
      const result = await store.append(streamName, events.map((e) => toNewEvent(e, ctx)), revision < 0 ? "no_stream" : revision);
      const next: Loaded<S> = { state: fold(decider, state, events), revision: result.revision, position: result.position };
      options.cache?.set(streamName, next);
      return { ...next, events, previousState: state };
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
      if (attempt >= maxAttempts) {
        throw new DomainError("CONFLICT", `stream ${streamName} is too busy: gave up after ${attempt} concurrent updates; try again`);
      }
      await conflictBackoff(attempt);
    }
  }
}

export function toNewEvent(e: DomainEventShape, ctx: CommandContext): NewEvent {
  const metadata: NewEvent["metadata"] = {
    principal: ctx.principal,
    ...(ctx.roles?.length ? { roles: [...ctx.roles] } : {}),
    correlationId: ctx.correlationId,
    causationId: ctx.causationId,
    at: ctx.at,
  };
  // The project of the request (traces group a correlation id's events by it).
  const project = ctx.requestProject ?? ctx.projectId;
  if (project) metadata.project = project;
  return { id: newEventId(), type: e.type, data: e.data, metadata };
}

/** Attempts before a revision conflict is given up as CONFLICT. */
export const MAX_ATTEMPTS = 10;

/** The small jittered pause before retrying after a revision conflict. */
export const conflictBackoff = (attempt: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
