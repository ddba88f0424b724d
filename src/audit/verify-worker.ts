/** A worker thread of verify-parallel.ts: verifies one range of the embedded log. */
import { parentPort, workerData } from "node:worker_threads";
import { verifyRange, type Range } from "./verify-parallel.js";

const { dir, range } = workerData as { dir: string; range: Range };
let last = 0;
const report = await verifyRange(dir, range, (progress) => {
  const now = Date.now();
  if (now - last < 100) return;
  last = now;
  parentPort!.postMessage({ progress });
});
parentPort!.postMessage({ report });
