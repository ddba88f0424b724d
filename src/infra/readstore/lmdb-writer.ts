/**
 * Where the LMDB read store's writes (lmdb-writes.ts) run: in lmdb's asynchronous transactions on
 * the caller's thread, or in synchronous ones on a write thread of the store's own
 * (lmdb-write-thread.ts), which opens the same environment. A write's JavaScript side (encoding keys, lmdb-js's instructions for each
 * put) then costs the main thread only the message: the audit index, which writes a few sorted-set
 * members for every event, took a tenth of the server's busy time on the main thread under a boot
 * storm (bench/RESULTS.md, "Where a flow's CPU goes").
 *
 * Either way a write resolves once committed, and reads on the caller's thread see it from then on
 * (the thread writer renews lmdb-js's read transaction, which otherwise lives until the next turn of
 * the event loop). Writes commit in the order they were asked for. Where no compiled thread script
 * exists (running from the TypeScript sources, in tests) the writes run on the caller's thread.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { RootDatabase } from "lmdb";
import type { LmdbDatabases } from "./lmdb-layout.js";
import { WRITES, type BatchArgs, type WriteArgs, type WriteName, type WriteResult } from "./lmdb-writes.js";
import { encodeFields } from "./keys-and-cursors.js";
import { CheckpointMismatchError, type Origin, type Write } from "./port.js";

export interface LmdbWriter {
  readonly thread: boolean;
  run<N extends WriteName>(name: N, args: WriteArgs<N>): Promise<WriteResult<N>>;
  /** Waits for the writes asked for, then lets go of the thread (the environment stays open). */
  close(): Promise<void>;
}

/** Writes in lmdb's asynchronous transactions on this thread: the callbacks run here, the commits on lmdb's writer thread. */
export function inProcessWriter(env: RootDatabase, db: LmdbDatabases): LmdbWriter {
  return {
    thread: false,
    run: (name, args) => env.transaction(() => (WRITES[name] as (d: LmdbDatabases, a: typeof args) => WriteResult<typeof name>)(db, args)),
    close: async () => undefined,
  };
}

/**
 * The thread's script: beside this module among the compiled modules, and beside the bundle's main
 * file in the server's bundle (scripts/build.mjs), where this module sits in a chunk shared with the
 * thread's entry, one folder below (chunks/).
 */
const SCRIPT = [new URL("./lmdb-write-thread.js", import.meta.url), new URL("../lmdb-write-thread.js", import.meta.url)].find((u) => existsSync(fileURLToPath(u)));

/** Whether a write thread can run here. */
export const writeThreadAvailable = (): boolean => SCRIPT !== undefined;

/**
 * Writes as the thread receives them: those asked for in one turn of the event loop go in one
 * message (a message wakes the thread: one a turn, not one a batch). A projector batch travels as
 * JSON text, its bigints as decimal strings; the rare others as they are.
 */
export type ThreadRequest = { id: number; name: "applyBatch"; batch: WireBatch } | { id: number; name: Exclude<WriteName, "applyBatch">; args: unknown };
export interface WireBatch {
  projection: string;
  checkpoint: string;
  /** "": any (undefined). */
  expected: string | null;
  origin?: Origin;
  /** The writes, JSON. */
  writes: string;
}
export interface CloseRequest {
  id: -1;
  name: "close";
}
export type ThreadMessage = ThreadRequest[] | CloseRequest;
export type ThreadAnswer = { id: number; value: unknown } | { id: number; error: SentError };
/** An error across the thread's boundary: its class by name, and what rebuilds it. */
export interface SentError {
  name: string;
  message: string;
  checkpoint?: { projection: string; expected: bigint | null | undefined; actual: bigint | undefined; attempted: bigint };
}

/** A batch for the wire; throws, as the write itself would, on a put field that is not JSON. */
function wireBatch(a: BatchArgs): WireBatch {
  for (const w of a.writes) if (w.op === "put") encodeFields(w.key, w.fields);
  const expected = a.expected === undefined ? "" : a.expected === null ? null : a.expected.toString();
  return { projection: a.projection, checkpoint: a.checkpoint.toString(), expected, origin: a.origin, writes: JSON.stringify(a.writes) };
}

/** The batch a wire batch holds (lmdb-write-thread.ts). */
export function fromWire(b: WireBatch): BatchArgs {
  const expected = b.expected === "" ? undefined : b.expected === null ? null : BigInt(b.expected);
  return { projection: b.projection, checkpoint: BigInt(b.checkpoint), expected, origin: b.origin, writes: JSON.parse(b.writes) as Write[] };
}

/** Writes on a thread of their own that opens `dir` with `options` (the environment this thread reads). */
export function threadWriter(dir: string, options: object, env: RootDatabase): LmdbWriter {
  if (!SCRIPT) throw new Error("the read store's write thread has no script here (lmdb-write-thread.js)");
  const worker = new Worker(SCRIPT, { workerData: { dir, options } });
  // Held open only while it has writes to answer: an idle store keeps no process alive.
  worker.unref();
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let queued: ThreadRequest[] = [];
  let next = 0;
  let failure: Error | undefined;
  const failAll = (err: Error) => {
    failure ??= err;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
  };
  const flush = () => {
    const requests = queued;
    queued = [];
    if (requests.length > 0) worker.postMessage(requests satisfies ThreadMessage);
  };
  worker.on("message", (answers: ThreadAnswer[]) => {
    // What the thread committed is read here from now on.
    env.resetReadTxn();
    for (const m of answers) {
      const w = waiting.get(m.id);
      if (!w) continue;
      waiting.delete(m.id);
      if ("error" in m) w.reject(rebuilt(m.error));
      else w.resolve(m.value);
    }
    if (waiting.size === 0) worker.unref();
  });
  worker.on("error", (err) => failAll(new Error(`the read store's write thread failed: ${err.message}`)));
  worker.on("exit", (code) => failAll(new Error(`the read store's write thread exited (code ${code})`)));
  const run = <N extends WriteName>(name: N, args: WriteArgs<N>): Promise<WriteResult<N>> => {
    if (failure) return Promise.reject(failure);
    let request: ThreadRequest;
    try {
      const id = next++;
      request = name === "applyBatch" ? { id, name, batch: wireBatch(args as BatchArgs) } : { id, name: name as Exclude<WriteName, "applyBatch">, args };
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise((resolve, reject) => {
      if (waiting.size === 0) worker.ref();
      waiting.set(request.id, { resolve: resolve as (v: unknown) => void, reject });
      if (queued.length === 0) setImmediate(flush);
      queued.push(request);
    });
  };
  return {
    thread: true,
    run,
    async close() {
      if (failure) return;
      // Writes asked for before are answered first: the thread takes its messages in order.
      flush();
      failure = new Error("the read store is closed");
      const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      worker.ref();
      worker.postMessage({ id: -1, name: "close" } satisfies ThreadMessage);
      await exited;
    },
  };
}

/** What the thread sends for `err` (lmdb-write-thread.ts). */
export function sent(err: unknown): SentError {
  if (err instanceof CheckpointMismatchError) {
    return { name: err.name, message: err.message, checkpoint: { projection: err.projection, expected: err.expected, actual: err.actual, attempted: err.attempted } };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message };
}

function rebuilt(e: SentError): Error {
  if (e.checkpoint) return new CheckpointMismatchError(e.checkpoint.projection, e.checkpoint.expected, e.checkpoint.actual, e.checkpoint.attempted);
  const err = e.name === "RangeError" ? new RangeError(e.message) : e.name === "TypeError" ? new TypeError(e.message) : new Error(e.message);
  if (err.name !== e.name) err.name = e.name;
  return err;
}
