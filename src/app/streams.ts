/** The store and the aggregate cache, with the deciders bound to their streams. */
import { arqDecider } from "../domain/arqs/decider.js";
import { deviceProfileDecider } from "../domain/device-profiles/decider.js";
import { uuidClaimDecider } from "../domain/device-profiles/uuid-claim.js";
import { instanceDecider } from "../domain/instances/decider.js";
import { hostDecider } from "../domain/inventory/decider.js";
import type { Decider } from "../domain/shared/decider.js";
import { stream, type CommandContext } from "../domain/shared/types.js";
import type { EventStore } from "../eventstore/port.js";
import { AggregateCache } from "./aggregate-cache.js";
import { handleCommand, loadAggregate, toNewEvent, type CommandSource, type DomainEventShape, type Loaded } from "./handle.js";

/** One aggregate type: how its stream is named, and its decider. */
export interface AggregateKind<C, S, E extends DomainEventShape> {
  streamName(id: string): string;
  decider: Decider<C, S, E>;
}

const kind = <C, S, E extends DomainEventShape>(streamName: (id: string) => string, decider: Decider<C, S, E>): AggregateKind<C, S, E> => ({
  streamName,
  decider,
});

export const aggregates = {
  profile: kind(stream.deviceProfile, deviceProfileDecider),
  profileUuid: kind(stream.deviceProfileUuid, uuidClaimDecider),
  host: kind(stream.host, hostDecider),
  arq: kind(stream.arq, arqDecider),
  instance: kind(stream.instance, instanceDecider),
};

/** A decision ready to append: the events `kind`'s decider gave for the state it loaded. */
export interface DecidedStep<S = unknown> {
  // The command type does not matter once decided.
  kind: AggregateKind<never, S, DomainEventShape>;
  id: string;
  loaded: Loaded<S>;
  events: DomainEventShape[];
  /**
   * "stream_exists" for a decision that commutes with others on its stream (see `record`): it is
   * appended wherever the stream is, and its state afterwards is read back. Default: exactly at
   * `loaded.revision`.
   */
  expected?: "stream_exists";
  /** The state after `events`, when the decider already folded them (saves folding them again). */
  after?: S;
}

/** A decision for Streams.appendSequence. */
export function decided<C, S, E extends DomainEventShape>(kind: AggregateKind<C, S, E>, id: string, loaded: Loaded<S>, events: E[]): DecidedStep {
  return { kind: kind as unknown as DecidedStep["kind"], id, loaded, events };
}

export interface SequenceOutcome {
  /** The state and revision after each appended step: a prefix of the steps. */
  appended: Array<Loaded<unknown>>;
  /** Why the next step was refused (a revision conflict); undefined when all were appended. */
  refusal?: Error;
}

export class Streams {
  constructor(
    readonly store: EventStore,
    readonly cache = new AggregateCache(),
  ) {}

  load<C, S, E extends DomainEventShape>(kind: AggregateKind<C, S, E>, id: string) {
    return loadAggregate(this.store, kind.streamName(id), kind.decider, this.cache);
  }

  handle<C, S, E extends DomainEventShape>(kind: AggregateKind<C, S, E>, id: string, command: CommandSource<C, S>, ctx: CommandContext) {
    return handleCommand(this.store, kind.streamName(id), kind.decider, command, ctx, { cache: this.cache });
  }

  /**
   * Appends decisions that depend on each other as one sequence (EventStore.appendSequence: one
   * commit on lmdb), each step checked against the revision it was decided on; stops at the first
   * refused step. The cache learns the state after each appended step.
   */
  async appendSequence(steps: readonly DecidedStep[], ctx: CommandContext): Promise<SequenceOutcome> {
    const result = await this.store.appendSequence(
      steps.map((st) => ({
        stream: st.kind.streamName(st.id),
        events: st.events.map((e) => toNewEvent(e, ctx)),
        expectedRevision: st.expected ?? (st.loaded.revision < 0 ? ("no_stream" as const) : st.loaded.revision),
      })),
    );
    const appended: Array<Loaded<unknown>> = [];
    for (const [i, r] of result.appended.entries()) {
      const st = steps[i]!;
      // Other writers' events may sit between what was loaded and what was appended: read back,
      // unless the revisions show that nothing did.
      if (st.expected && r.revision !== st.loaded.revision + st.events.length) {
        appended.push(await this.load(st.kind, st.id));
        continue;
      }
      const state = st.after ?? st.events.reduce((acc, e) => st.kind.decider.evolve(acc, e), st.loaded.state);
      this.cache.set(st.kind.streamName(st.id), { state, revision: r.revision });
      appended.push({ state, revision: r.revision });
    }
    return { appended, refusal: result.refusal };
  }

  /**
   * For commands that commute with each other (many creators recording onto one stream): decide
   * against `state`, append without an exact expected revision, and return the state folded after
   * the append. The caller checks there that the event took effect (evolve ignores an event that
   * lost a race, e.g. one that landed after a deletion), and compensates if it did not.
   */
  async record<C, S, E extends DomainEventShape>(kind: AggregateKind<C, S, E>, id: string, state: S, command: C, ctx: CommandContext) {
    const events = kind.decider.decide(command, state);
    if (events.length > 0) await this.store.append(kind.streamName(id), events.map((e) => toNewEvent(e, ctx)), "stream_exists");
    return this.load(kind, id);
  }
}
