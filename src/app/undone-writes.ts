/**
 * A refusal that comes after the call wrote events and then undid them (create-and-bind deletes
 * the ARQs it created when their bind is refused). The front doors wait for the read models before
 * such an error goes out (api/read-your-writes.ts), so a client's next read does not see what the
 * call undid; other refusals wrote nothing and answer at once.
 */
const UNDONE = Symbol("cyborg.followsUndoneWrites");

/** Marks `err` as following writes the call undid; returns it. */
export function afterUndoneWrites<E>(err: E): E {
  if (typeof err === "object" && err !== null) Object.defineProperty(err, UNDONE, { value: true });
  return err;
}

export function followsUndoneWrites(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as Record<symbol, unknown>)[UNDONE] === true;
}
