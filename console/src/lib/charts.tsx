/**
 * Two small charts drawn as SVG with attributes only (the console's Content-Security-Policy
 * allows no inline style): a capacity bar (used, reserved, free) and per-minute bind outcomes.
 */

export interface Capacity {
  total: number;
  used: number;
  reserved: number;
}

export const freeOf = (c: Capacity) => Math.max(0, c.total - c.used - c.reserved);

/** One bar: used, then reserved, then free, each as wide as its share of the total. */
export function CapacityBar({ capacity, label }: { capacity: Capacity; label: string }) {
  const { total, used, reserved } = capacity;
  const free = freeOf(capacity);
  const pct = (n: number) => (total > 0 ? (100 * n) / total : 0);
  return (
    <svg className="bar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label={`${label}: ${free} free, ${used} used, ${reserved} reserved of ${total}`}>
      <rect className="used" x={0} y={0} width={pct(used)} height={10} />
      <rect className="reserved" x={pct(used)} y={0} width={pct(reserved)} height={10} />
      <rect className="free" x={pct(used + reserved)} y={0} width={pct(free)} height={10} />
    </svg>
  );
}

export interface MinuteOutcomes {
  minute: string;
  bound: number;
  failed: number;
}

/** One column per minute, bound below failed, scaled to the busiest minute. */
export function OutcomeChart({ minutes }: { minutes: MinuteOutcomes[] }) {
  const peak = Math.max(1, ...minutes.map((m) => m.bound + m.failed));
  const h = 60;
  const w = minutes.length;
  const scale = (n: number) => (h * n) / peak;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label="Binds per minute over the last hour: bound and failed">
        {minutes.map((m, i) => (
          <g key={m.minute}>
            <title>{`${new Date(m.minute).toLocaleTimeString()}: ${m.bound} bound, ${m.failed} failed`}</title>
            <rect className="bound" x={i + 0.1} y={h - scale(m.bound)} width={0.8} height={scale(m.bound)} />
            <rect className="failed" x={i + 0.1} y={h - scale(m.bound + m.failed)} width={0.8} height={scale(m.failed)} />
          </g>
        ))}
      </svg>
      <figcaption className="muted">
        <span>{minutes[0] ? new Date(minutes[0].minute).toLocaleTimeString() : ""}</span>
        <span>peak {peak === 1 && minutes.every((m) => m.bound + m.failed === 0) ? 0 : peak} a minute</span>
        <span>now</span>
      </figcaption>
    </figure>
  );
}
