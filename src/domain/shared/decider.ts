/**
 * The decider pattern (emmett): state is folded from events with `evolve`, and `decide` turns a
 * command into new events or throws a DomainError. Both are pure: no clock, no random, no I/O.
 */
export interface Decider<C, S, E> {
  initialState(): S;
  evolve(state: S, event: E): S;
  decide(command: C, state: S): E[];
}

/** For the `default` branch of exhaustive switches. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}

export function fold<S, E>(decider: Pick<Decider<unknown, S, E>, "evolve">, state: S, events: readonly E[]): S {
  return events.reduce((s, e) => decider.evolve(s, e), state);
}
