/** given(events).when(command).then(events) for deciders, as in emmett's DeciderSpecification. */
import { expect } from "vitest";
import type { Decider } from "../../src/domain/shared/decider.js";
import { DomainError } from "../../src/domain/shared/types.js";

export interface Then<S, E> {
  then(expected: E[]): void;
  thenNothing(): void;
  thenThrows(code: DomainError["code"], field?: string, message?: RegExp | string): DomainError;
  /** The events decided, for finer assertions. */
  events(): E[];
  /** The state after folding the decided events. */
  state(): S;
}

export function deciderSpec<C, S, E>(decider: Decider<C, S, E>) {
  return {
    given(events: E[] = []) {
      const state = events.reduce((s, e) => decider.evolve(s, e), decider.initialState());
      return {
        state: () => state,
        when(command: C): Then<S, E> {
          const run = () => decider.decide(command, state);
          return {
            then: (expected) => expect(run()).toEqual(expected),
            thenNothing: () => expect(run()).toEqual([]),
            thenThrows: (code, field, message) => expectDomainError(run, code, field, message),
            events: run,
            state: () => run().reduce((s, e) => decider.evolve(s, e), state),
          };
        },
      };
    },
  };
}

export function expectDomainError(fn: () => unknown, code: DomainError["code"], field?: string, message?: RegExp | string): DomainError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught, "expected a DomainError").toBeInstanceOf(DomainError);
  const err = caught as DomainError;
  expect({ code: err.code, ...(field === undefined ? {} : { field: err.field }) }).toEqual({ code, ...(field === undefined ? {} : { field }) });
  if (message !== undefined) expect(err.message).toMatch(message);
  return err;
}

export async function expectDomainRejection(p: Promise<unknown>, code: DomainError["code"], field?: string, message?: RegExp | string): Promise<DomainError> {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  return expectDomainError(() => {
    if (caught) throw caught;
  }, code, field, message);
}
