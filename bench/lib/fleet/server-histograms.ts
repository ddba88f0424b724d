/**
 * What the server's own histograms say about where a bind's time goes (read from one /metrics
 * text at the end of a run): for each, the observations and the share of them above 25 and 50 ms
 * (the buckets' bounds, so exact there).
 */
type Share = { count: number; over_25ms_pct: number; over_50ms_pct: number };

/** The histogram's cumulative buckets (le -> count) over the series whose labels match. */
function buckets(text: string, name: string, labels: Record<string, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = new RegExp(`^${name}_bucket\\{(.*)\\} (\\S+)$`).exec(line);
    if (!m) continue;
    const got = Object.fromEntries([...m[1]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    if (!Object.entries(labels).every(([k, v]) => got[k] === v)) continue;
    out.set(got.le!, (out.get(got.le!) ?? 0) + Number(m[2]));
  }
  return out;
}

function share(text: string, name: string, labels: Record<string, string>): Share | null {
  const b = buckets(text, name, labels);
  const count = b.get("+Inf");
  if (!count) return null;
  const over = (le: string) => +(((count - (b.get(le) ?? 0)) / count) * 100).toFixed(2);
  return { count, over_25ms_pct: over("0.025"), over_50ms_pct: over("0.05") };
}

export function bindStages(text: string) {
  return {
    bind_mutation: share(text, "cyborg_graphql_operation_duration_seconds", { operation: "bindAcceleratorRequests" }),
    bind_start_to_bound: share(text, "cyborg_bind_duration_seconds", { outcome: "bound" }),
    append_sequence: share(text, "cyborg_eventstore_append_duration_seconds", { operation: "appendSequence", result: "ok" }),
    append: share(text, "cyborg_eventstore_append_duration_seconds", { operation: "append", result: "ok" }),
    read_your_writes_wait: share(text, "cyborg_read_your_writes_wait_seconds", {}),
    projection_batch: share(text, "cyborg_projection_batch_duration_seconds", {}),
  };
}
