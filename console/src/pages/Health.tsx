import { ErrorNote } from "../lib/session";
import { readiness } from "../lib/api";
import { usePolled } from "../lib/hooks";
import { Link } from "../lib/router";

/** /readyz in the header: ready, or how far behind the read models are. */
export function HealthBadge() {
  const { data, error } = usePolled(readiness, 3000, []);
  const lag = Math.max(0, ...(data?.projections ?? []).map((p) => p.lagMs));
  const ok = data?.status === "ready";
  return (
    <Link to="/health" className={`badge ${error ? "bad" : ok ? "ok" : "warn"}`} data-testid="health-badge">
      {error ? "unreachable" : !data ? "…" : ok ? `ready${lag ? `, lag ${lag} ms` : ""}` : "not ready"}
    </Link>
  );
}

export function HealthPage() {
  const { data, error } = usePolled(readiness, 2000, []);
  return (
    <section aria-labelledby="health-title">
      <h1 id="health-title">Health</h1>
      <ErrorNote error={error} />
      {data ? (
        <>
          {!data.projections && !data.error ? <p className="hint">The log's head and each projection's progress are shown to an admin's token.</p> : null}
          <dl className="facts">
            <dt>Status</dt>
            <dd>{data.status}</dd>
            <dt>Event log</dt>
            <dd>{data.eventLog ?? data.error}</dd>
            <dt>Head position</dt>
            <dd className="mono">{data.head ?? "empty"}</dd>
            <dt>Open bind subscriptions</dt>
            <dd>{data.boundSubscriptions ?? "-"}</dd>
          </dl>
          <table>
            <caption>Projections (read models)</caption>
            <thead>
              <tr>
                <th scope="col">Projection</th>
                <th scope="col">State</th>
                <th scope="col">Checkpoint</th>
                <th scope="col" className="num">Lag (events)</th>
                <th scope="col" className="num">Lag (ms)</th>
              </tr>
            </thead>
            <tbody>
              {(data.projections ?? []).map((p) => (
                <tr key={p.name}>
                  <th scope="row">{p.name}</th>
                  <td>
                    <span className={`badge ${p.state === "live" ? "ok" : "warn"}`}>{p.state}</span> {p.error ?? ""}
                  </td>
                  <td className="mono">{p.checkpoint ?? "none"}</td>
                  <td className="num">{p.lagEvents ?? 0}</td>
                  <td className="num">{p.lagMs}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="hint">
            Prometheus metrics: <a href="/metrics">/metrics</a> (unless METRICS_PORT serves them elsewhere).
          </p>
        </>
      ) : null}
    </section>
  );
}
