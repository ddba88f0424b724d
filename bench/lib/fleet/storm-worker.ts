/** The thread of `StormThread`: a `BootStorm`, its hosts asked of the main thread every few seconds. */
import { parentPort, workerData } from "node:worker_threads";
import { seededRandom } from "../seeded-random.js";
import { BootStorm } from "./storm.js";
import type { StormThreadOptions } from "./storm-thread.js";

const o = workerData as StormThreadOptions;
const port = parentPort!;
let hostnames: string[] = [];
const storm = new BootStorm({ ...o, hostnames: () => hostnames, random: seededRandom(o.seed) });
const ask = () => port.postMessage({ hostnames: true });
ask();
// The binds since the last progress go with it, for the main thread's figures of the last seconds.
let sent = 0;
const timer = setInterval(() => {
  ask();
  const binds = storm.bindMs.slice(sent);
  sent = storm.bindMs.length;
  port.postMessage({ progress: { flows: storm.flows, failed: storm.failed, binds } });
}, 5_000);

port.on("message", async (m: { hostnames?: string[]; start?: true; stop?: true }) => {
  if (m.hostnames) hostnames = m.hostnames;
  if (m.start) storm.start();
  if (m.stop) {
    clearInterval(timer);
    await storm.stop();
    port.postMessage({ figures: { flows: storm.flows, failed: storm.failed, failures: storm.failures, bindMs: storm.bindMs } });
  }
});
