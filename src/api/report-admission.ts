/**
 * Admission of whole host reports. A report is the heaviest thing an agent sends (the whole
 * device tree, diffed against the host stream), and a fleet sends many at once when the service
 * comes back or a rack of agents restarts. At most `maxInFlight` are taken at a time and
 * `maxQueued` wait their turn, in order; past that a report is refused at once with
 * `UNAVAILABLE` (HTTP 503) and a Retry-After spread over [retryAfterS, 2 x retryAfterS), so the
 * agents come back spread out instead of all together. Confirmations by digest are never held.
 */
import { GraphQLError } from "graphql";

export interface ReportAdmissionSettings {
  /** Reports decided at once (REPORT_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** Reports waiting for their turn (REPORT_MAX_QUEUED); 0: none wait. */
  maxQueued: number;
  /** The least a refused agent is asked to wait, in seconds (REPORT_RETRY_AFTER_S). */
  retryAfterS: number;
}

export const UNAVAILABLE_CODE = "UNAVAILABLE";

export class ReportAdmission {
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  /** Reports refused since start. */
  refused = 0;

  constructor(
    readonly settings: ReportAdmissionSettings,
    private readonly jitter: () => number = Math.random,
  ) {}

  /** Runs `take` when its turn comes, or throws UNAVAILABLE with a Retry-After when too many wait. */
  async admit<T>(take: () => Promise<T>): Promise<T> {
    if (this.inFlight < this.settings.maxInFlight) this.inFlight++;
    else if (this.waiting.length < this.settings.maxQueued) await new Promise<void>((turn) => this.waiting.push(turn));
    else throw this.busy();
    try {
      return await take();
    } finally {
      // The slot passes to the next in line, or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }

  /** What is taken and waiting now (for metrics and tests). */
  load(): { inFlight: number; queued: number } {
    return { inFlight: this.inFlight, queued: this.waiting.length };
  }

  private busy(): GraphQLError {
    this.refused++;
    const { maxInFlight, maxQueued, retryAfterS } = this.settings;
    const wait = Math.max(1, Math.ceil(retryAfterS * (1 + this.jitter())));
    return new GraphQLError(
      `the service is taking ${maxInFlight} host reports and ${maxQueued} more wait (REPORT_MAX_IN_FLIGHT, REPORT_MAX_QUEUED): send this report again in ${wait} s; nothing of it was written`,
      { extensions: { code: UNAVAILABLE_CODE, retryAfterSeconds: wait } },
    );
  }
}
