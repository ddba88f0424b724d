/**
 * Events Nova answered 422 for: the instance is not on a host yet (Nova bug 1855752, a race with
 * the build). Each is tried again, with a growing pause, until Nova takes it or NOVA_EVENT_RETRY_S
 * have passed since the first 422 (Nova's own arq_binding_timeout is 300 s: after that no compute
 * waits for it), then dropped with a warning. The set is small; it is saved with the notifier's
 * checkpoint, so a restart goes on trying.
 */
import type { Delivery } from "./deliveries.js";

export interface HeldEvent extends Delivery {
  /** When Nova first answered 422 (ISO-8601). */
  since: string;
  attempts: number;
}

export class HeldEvents {
  private readonly held = new Map<string, HeldEvent>();
  /** Not saved: after a restart every held event is due at once. */
  private readonly nextAt = new Map<string, number>();

  constructor(
    private readonly retryForMs: number,
    private readonly firstPauseMs: number,
    private readonly maxPauseMs = 10_000,
  ) {}

  get size(): number {
    return this.held.size;
  }

  has(key: string): boolean {
    return this.held.has(key);
  }

  /** Nova answered 422 (again) at `now`. */
  refused(d: Delivery, now: number): HeldEvent {
    const h = this.held.get(d.key) ?? { ...d, since: new Date(now).toISOString(), attempts: 0 };
    h.attempts++;
    this.held.set(d.key, h);
    this.nextAt.set(d.key, now + Math.min(this.maxPauseMs, this.firstPauseMs * 2 ** (h.attempts - 1)));
    return h;
  }

  /** Nova took it, said the instance is gone, or it expired. */
  settle(key: string): void {
    this.held.delete(key);
    this.nextAt.delete(key);
  }

  /** Held past NOVA_EVENT_RETRY_S: to drop. */
  expired(now: number): HeldEvent[] {
    return [...this.held.values()].filter((h) => now - Date.parse(h.since) >= this.retryForMs);
  }

  /** Due for another try. */
  due(now: number): HeldEvent[] {
    return [...this.held.values()].filter((h) => (this.nextAt.get(h.key) ?? 0) <= now);
  }

  /** A failed try (Nova down): try again after the pause, without counting a 422. */
  postpone(key: string, now: number): void {
    if (this.held.has(key)) this.nextAt.set(key, now + this.maxPauseMs);
  }

  snapshot(): HeldEvent[] {
    return [...this.held.values()];
  }

  restore(saved: unknown): void {
    this.held.clear();
    this.nextAt.clear();
    if (!Array.isArray(saved)) return;
    for (const h of saved as HeldEvent[]) if (typeof h?.key === "string" && h.event && typeof h.since === "string") this.held.set(h.key, h);
  }
}
