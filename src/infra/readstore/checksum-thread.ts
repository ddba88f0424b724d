/**
 * CRC-32s computed on a worker thread over bytes in shared memory, so that a restart checks its
 * read-model snapshots on a second core while the first decodes them (memory-snapshots.ts). The
 * caller uses nothing it decoded until the check has answered. Where the thread cannot run (it
 * failed to start, or died), the check is made on the caller's thread instead: never skipped.
 */
import { Worker } from "node:worker_threads";
import * as zlib from "node:zlib";

/** zlib's CRC-32 (node 20.15 and later), or undefined on an older node. */
export const crc32 = (zlib as Partial<typeof zlib>).crc32;

// CommonJS, evaluated by the worker: no file to find beside the bundle or the modules.
const SOURCE = `
const { parentPort } = require("node:worker_threads");
const { crc32 } = require("node:zlib");
parentPort.on("message", (m) => parentPort.postMessage({ id: m.id, value: crc32(new Uint8Array(m.buffer, m.offset, m.length)) }));
`;

type Waiter = { resolve: (v: number) => void; bytes: Uint8Array };

export class ChecksumThread {
  private worker?: Worker;
  private failed = false;
  private next = 0;
  private readonly waiting = new Map<number, Waiter>();

  /** The CRC-32 of `bytes`: on the thread when they lie in shared memory, else here. */
  crc32(bytes: Uint8Array): Promise<number> {
    if (!crc32) return Promise.reject(new Error("this node has no CRC-32 (node 20.15 or later has)"));
    const worker = bytes.buffer instanceof SharedArrayBuffer ? this.started() : undefined;
    if (!worker) return Promise.resolve(crc32(bytes));
    const id = this.next++;
    return new Promise<number>((resolve) => {
      this.waiting.set(id, { resolve, bytes });
      worker.postMessage({ id, buffer: bytes.buffer, offset: bytes.byteOffset, length: bytes.byteLength });
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.failed = true;
    this.computeWaitingHere();
    await w?.terminate();
  }

  private started(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    try {
      const w = new Worker(SOURCE, { eval: true });
      w.unref();
      w.on("message", (m: { id: number; value: number }) => {
        const waiter = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        waiter?.resolve(m.value);
      });
      // A thread that fails leaves its checks to this one.
      const fail = () => {
        this.worker = undefined;
        this.failed = true;
        this.computeWaitingHere();
      };
      w.on("error", fail);
      w.on("exit", fail);
      this.worker = w;
    } catch {
      this.failed = true;
    }
    return this.worker;
  }

  private computeWaitingHere(): void {
    for (const [id, w] of this.waiting) {
      this.waiting.delete(id);
      w.resolve(crc32!(w.bytes));
    }
  }
}
