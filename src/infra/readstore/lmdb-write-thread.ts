/**
 * The LMDB read store's write thread (lmdb-writer.ts): opens the environment the store reads, runs
 * each write it is sent in a synchronous transaction of its own (lmdb-writes.ts), and answers once
 * it is committed, with its result or the error that aborted it (the writes of one message in one
 * answer). A close request closes the environment and ends the thread, after every write sent
 * before it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { open } from "lmdb";
import { openDatabases, type LmdbDatabases } from "./lmdb-layout.js";
import { fromWire, sent, type ThreadAnswer, type ThreadMessage } from "./lmdb-writer.js";
import { WRITES } from "./lmdb-writes.js";

const { dir, options } = workerData as { dir: string; options: object };
const env = open({ path: dir, ...options });
const db = openDatabases(env);
const port = parentPort!;

port.on("message", (m: ThreadMessage) => {
  if (!Array.isArray(m)) {
    // Every write sent before it was committed and answered: messages are taken one at a time.
    void env.close().then(() => port.close());
    return;
  }
  // One synchronous transaction a write, each committed before the next: this thread does
  // nothing else, and lmdb's asynchronous transactions cost about 200 us of CPU each in handing
  // the transaction between threads, against about 25 us for a synchronous one (bench/RESULTS.md).
  const answers = m.map((r): ThreadAnswer => {
    try {
      const args = r.name === "applyBatch" ? fromWire(r.batch) : r.args;
      const write = WRITES[r.name] as (d: LmdbDatabases, a: unknown) => unknown;
      return { id: r.id, value: env.transactionSync(() => write(db, args)) };
    } catch (err) {
      return { id: r.id, error: sent(err) };
    }
  });
  port.postMessage(answers);
});
