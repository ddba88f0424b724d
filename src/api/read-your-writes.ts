/**
 * Read-your-writes, once for every front door: a write's answer goes out only when the read models
 * show the log up to its head (`ApiServices.catchUp`), so a client's next read sees its write. A
 * write that fails answers at once, but for one that wrote and then undid what it wrote
 * (`followsUndoneWrites`, app/undone-writes.ts): it waits the same way, so the next read does not
 * see what it undid. Reads and subscriptions never wait, but for `hostStatus`, which reads the log
 * and so waits for the models to show what it read (`hostStatusesOf`,
 * graphql/resolvers/host-status.ts). Each door puts its writes through `afterCatchUp` in one place:
 * GraphQL's mutation fields (graphql/read-your-writes.ts), the REST router's POST, PATCH and
 * DELETE, the bitstream upload.
 */
import { followsUndoneWrites } from "../app/undone-writes.js";

/** An answer read from the read models once they show the write (GraphQL's setDeviceStatus, programDeployable). */
export class ReadAfterWrite<T> {
  constructor(readonly read: () => T | Promise<T>) {}
}

export function readAfterWrite<T>(read: () => T | Promise<T>): ReadAfterWrite<T> {
  return new ReadAfterWrite(read);
}

/** Runs the write, waits for the read models, then answers (reading them first for a `ReadAfterWrite`). */
export async function afterCatchUp<T>(catchUp: () => Promise<void>, write: () => T | Promise<T>): Promise<T> {
  let answer: T;
  try {
    answer = await write();
  } catch (err) {
    if (followsUndoneWrites(err)) await catchUp();
    throw err;
  }
  await catchUp();
  return answer instanceof ReadAfterWrite ? ((await answer.read()) as T) : answer;
}
