/**
 * Background work on the main thread that leaves most of it to requests: between two steps the
 * work asks `pause()`, which waits so that the work takes at most `share` of the thread's time
 * (a step of 4 ms at a quarter: a pause of 12 ms). Work that must end now (a clean stop) calls
 * `hurry()`: from then on a pause is one turn of the event loop.
 */
import { setImmediate as turn } from "node:timers/promises";

export interface Pacing {
  pause(): Promise<void>;
}

/** A pacing that can be told to stop pausing (a clean stop finishes the work at full speed). */
export interface StoppablePacing extends Pacing {
  hurry(): void;
}

export class DutyCycle implements StoppablePacing {
  private since = performance.now();
  private hurried = false;

  constructor(private readonly share: number) {
    if (!(share > 0 && share <= 1)) throw new RangeError(`a duty cycle's share is in (0, 1], not ${share}`);
  }

  async pause(): Promise<void> {
    const rest = this.hurried ? 0 : (performance.now() - this.since) * (1 / this.share - 1);
    await (rest >= 1 ? new Promise<void>((resolve) => setTimeout(resolve, rest)) : turn());
    this.since = performance.now();
  }

  hurry(): void {
    this.hurried = true;
  }
}
