/**
 * The boot storm on a thread of its own. Nova's requests do not come from the process that plays
 * 10,000 agents: run there, every stall of that process (its collector, the agents' timers) would
 * be counted in the binds' latency. The thread runs `BootStorm` and sends its figures back.
 */
import { Worker } from "node:worker_threads";
import type { BootStorm, StormOptions } from "./storm.js";

export type StormThreadOptions = Omit<StormOptions, "hostnames" | "random"> & { seed: number };

/** What the thread's storm sends back when it stops. */
type Figures = Pick<BootStorm, "flows" | "failed" | "failures" | "bindMs">;

export class StormThread {
  flows = 0;
  failed = 0;
  failures: Figures["failures"] = [];
  bindMs: Figures["bindMs"] = [];
  private readonly worker: Worker;
  private stopped: ((f: Figures) => void) | undefined;

  constructor(o: StormThreadOptions, hostnames: () => string[]) {
    this.worker = new Worker(new URL("./storm-worker.js", import.meta.url), { workerData: o });
    this.worker.on("message", (m: { progress?: { flows: number; failed: number; binds: Figures["bindMs"] }; figures?: Figures; hostnames?: true }) => {
      if (m.hostnames) this.worker.postMessage({ hostnames: hostnames() });
      if (m.progress) {
        ({ flows: this.flows, failed: this.failed } = m.progress);
        this.bindMs.push(...m.progress.binds);
      }
      if (m.figures) this.stopped?.(m.figures);
    });
  }

  start(): void {
    this.worker.postMessage({ start: true });
  }

  async stop(): Promise<void> {
    const figures = await new Promise<Figures>((resolve) => {
      this.stopped = resolve;
      this.worker.postMessage({ stop: true });
    });
    Object.assign(this, figures);
    await this.worker.terminate();
  }
}
