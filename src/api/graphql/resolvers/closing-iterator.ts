/**
 * A subscription's stream whose end closes its listener first. A client's `complete` reaches the
 * stream as return() while the generator waits for the next notification, and an async generator
 * takes return() only at a yield: closing the listener ends that wait, so a completed subscription
 * does not stay in memory.
 */
export function closingIterator<T>(gen: AsyncGenerator<T>, close: () => void): AsyncIterableIterator<T> {
  return {
    next: () => gen.next(),
    return: (value?: unknown) => {
      close();
      return gen.return(value as never);
    },
    throw: (err?: unknown) => {
      close();
      return gen.throw(err);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
