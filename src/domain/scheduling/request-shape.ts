/**
 * A request's shape: per group, the resource classes its alternatives may use. A host's bound for
 * a request (the most its providers could give: per group, the free handles of its best-provided
 * class, summed) depends only on the shape, so an index kept across decisions can keep every host's
 * bound for the shapes asked for (kept-index.ts), and a decision reads hosts in bound order at once.
 *
 * A request that tolerates no taint (most do) can use no tainted provider and no device that takes
 * nothing new (fit.ts: openToAll), so its bound counts only the others: a host whose free handles
 * are tainted or being cleaned ranks by what the request could really get there.
 */
import type { PlacementRequest, RequestShape } from "./types.js";

/** Whether the request tolerates no taint: its bound counts only providers open to it (fit.ts: openToAll). */
export const toleratesNothing = (request: PlacementRequest): boolean => request.groups.every((g) => g.tolerations.length === 0);

/** Per group, its classes (sorted, each once); the groups sorted too: a bound is a sum of maxima, whatever their order. */
export function shapeOf(request: PlacementRequest): RequestShape {
  return request.groups.map((g) => [...new Set(g.alternatives.map((n) => n.resourceClass))].sort()).sort((a, b) => cmp(a.join("\u0000"), b.join("\u0000")));
}

/** One string per shape (a class name holds no NUL). */
export function shapeKey(shape: RequestShape): string {
  return shape.map((classes) => classes.join("\u0000")).join("\u0001");
}

/** Per group, the most free handles of its classes, summed: `free` gives one class's free handles on the host. */
export function boundOfShape(shape: RequestShape, free: (resourceClass: string) => number): number {
  let sum = 0;
  for (const classes of shape) {
    let most = 0;
    for (const rc of classes) most = Math.max(most, free(rc));
    sum += most;
  }
  return sum;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
