/**
 * The LMDB read store's write thread (lmdb-writer.ts): opens the environment the store reads, runs
 * each write it is sent in one of lmdb's asynchronous transactions (lmdb-writes.ts), and answers
 * once it is committed, with its result or the error that aborted it (the writes of one message
 * in one answer). A close request closes the environment and ends the thread, after every write
 * sent before it.
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
let last: Promise<unknown> = Promise.resolve();

port.on("message", (m: ThreadMessage) => {
  if (!Array.isArray(m)) {
    void last.finally(async () => {
      await env.close();
      port.close();
    });
    return;
  }
  // Asked for in one turn here too: lmdb commits them together, and they are answered in one message.
  const answers = m.map((r) => {
    const args = r.name === "applyBatch" ? fromWire(r.batch) : r.args;
    const write = WRITES[r.name] as (d: LmdbDatabases, a: unknown) => unknown;
    return env.transaction(() => write(db, args)).then(
      (value): ThreadAnswer => ({ id: r.id, value }),
      (err: unknown): ThreadAnswer => ({ id: r.id, error: sent(err) }),
    );
  });
  last = Promise.all(answers).then((a) => port.postMessage(a));
});
