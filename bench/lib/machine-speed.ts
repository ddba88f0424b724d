import { createHash } from "node:crypto";

/**
 * Milliseconds this process takes for a fixed piece of CPU work (a SHA-256 chain and an integer
 * loop). On a shared VM the same work has taken 400 ms one minute and 650 ms the next: printed
 * next to a benchmark's figures, it tells a slow run on a busy host from a slow server.
 */
export function machineSpeedMs(): number {
  const t0 = performance.now();
  let h: Buffer = Buffer.alloc(32);
  for (let i = 0; i < 100_000; i++) h = createHash("sha256").update(h).digest();
  let x = h[0]!;
  for (let i = 0; i < 15_000_000; i++) x = (x * 31 + i) | 0;
  const ms = performance.now() - t0;
  // Use x, so the loop cannot be optimized away.
  return x === 0.5 ? ms + 1 : Math.round(ms);
}
