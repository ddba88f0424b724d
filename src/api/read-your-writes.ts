/**
 * Read-your-writes, once for every front door: a write's answer goes out only when the read models
 * show the log up to its head (`ApiServices.catchUp`), so a client's next read sees its write. A
 * write that fails answers at once; reads and subscriptions never wait, but for `hostStatus`, which reads
 * the log and so waits for the models to show what it read (`hostStatusesOf`, graphql/resolvers/host-status.ts). Each door puts its writes
 * through `afterCatchUp` in one place: GraphQL's mutation fields (graphql/read-your-writes.ts), the
 * REST router's POST, PATCH and DELETE, the bitstream upload.
 */

/** An answer read from the read models once they show the write (GraphQL's setDeviceStatus, programDeployable). */
export class ReadAfterWrite<T> {
  constructor(readonly read: () => T | Promise<T>) {}
}

export function readAfterWrite<T>(read: () => T | Promise<T>): ReadAfterWrite<T> {
  return new ReadAfterWrite(read);
}

/** Runs the write, waits for the read models, then answers (reading them first for a `ReadAfterWrite`). */
export async function afterCatchUp<T>(catchUp: () => Promise<void>, write: () => T | Promise<T>): Promise<T> {
  const answer = await write();
  await catchUp();
  return answer instanceof ReadAfterWrite ? ((await answer.read()) as T) : answer;
}
