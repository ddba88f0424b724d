import { LRUCache } from "lru-cache";
import { livenessOf, type HostLiveness, type LivenessPolicy } from "../domain/inventory/liveness.js";
import type { PubSub, PubSubSubscription } from "../infra/pubsub/port.js";

/** Every replica hears of every report taken (Redis pub/sub in production, in-process in embedded mode). */
export const AGENT_REPORT_TOPIC = "agent-report";

interface ReportHeard {
  hostname: string;
  at: string;
}

/**
 * When each host's agent last reported (a full report or a confirmation). Kept outside the log: an
 * unchanged report writes no event. Lost with the process: after a restart a host's last report is
 * unknown, so it counts as stale until its next report (domain/inventory/liveness.ts). Bounded:
 * the least recently reporting hosts go first.
 */
export class ReportTimes {
  private readonly last: LRUCache<string, string>;
  private sub: PubSubSubscription<ReportHeard> | undefined;
  private pubsub: PubSub | undefined;

  constructor(
    readonly policy: LivenessPolicy,
    /** Since when reports are seen (the process's start). */
    readonly knownSince: string = new Date().toISOString(),
    max = 200_000,
  ) {
    this.last = new LRUCache({ max });
  }

  /** Records a report taken at `at`; later reports win, whatever order they are heard in. */
  note(hostname: string, at: string): void {
    this.hear(hostname, at);
    void this.pubsub?.publish(AGENT_REPORT_TOPIC, { hostname, at } satisfies ReportHeard).catch(() => undefined);
  }

  lastReport(hostname: string): string | null {
    return this.last.get(hostname) ?? null;
  }

  liveness(hostname: string, now = new Date().toISOString()): HostLiveness {
    return livenessOf(this.lastReport(hostname), this.knownSince, now, this.policy);
  }

  /** Shares reports with the other replicas: publishes those taken here, hears theirs. Resolves once listening. */
  async share(pubsub: PubSub): Promise<void> {
    this.pubsub = pubsub;
    const sub = (this.sub = pubsub.subscribe<ReportHeard>(AGENT_REPORT_TOPIC));
    void (async () => {
      for await (const r of sub) if (typeof r?.hostname === "string" && typeof r.at === "string") this.hear(r.hostname, r.at);
    })().catch(() => undefined);
    await sub.ready;
  }

  async close(): Promise<void> {
    this.pubsub = undefined;
    await this.sub?.close();
  }

  private hear(hostname: string, at: string): void {
    const known = this.last.get(hostname);
    if (known === undefined || Date.parse(at) > Date.parse(known)) this.last.set(hostname, at);
  }
}
