import { ErrorNote, type Session } from "../lib/session";
import { gql } from "../lib/api";
import { CapacityBar, freeOf, OutcomeChart, type Capacity, type MinuteOutcomes } from "../lib/charts";
import { usePolled } from "../lib/hooks";
import { Link } from "../lib/router";
import { AgentBadge, loadHosts, type Liveness, type Rp } from "./Hosts";

interface Outcomes {
  bound: number;
  failed: number;
  truncated: boolean;
  minutes: MinuteOutcomes[];
  recentFailures: Array<{ arqUuid: string; instanceUuid: string | null; reason: string; at: string }>;
}
interface Held {
  uuid: string;
  projectId: string | null;
  instanceUuid: string | null;
  hostname: string | null;
}

const OUTCOMES = `{ bindOutcomes(minutes: 60) { bound failed truncated minutes { minute bound failed } recentFailures { arqUuid instanceUuid reason at } } }`;
const HELD = `{ acceleratorRequests(filter: { state: BOUND }, first: 1000) { totalCount nodes { uuid projectId instanceUuid hostname } } }`;
const EVERY_MS = 5000;

/** The first page an operator opens: how full the fleet is, how binds go, what failed, whose agents are silent, who holds what. */
export function OverviewPage({ session }: { session: Session }) {
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <div className="overview">
        {session.can("resource_provider:read") ? <CapacitySection session={session} /> : null}
        {session.can("audit:read") ? <BindsSection session={session} /> : null}
        {session.can("host:status") && session.can("resource_provider:read") ? <AgentsSection session={session} /> : null}
        {session.can("arq:read") ? <HoldingsSection session={session} /> : null}
      </div>
    </section>
  );
}

type Row = Capacity & { key: string; hostname: string; resourceClass: string };

function sum(rps: Rp[], keyOf: (rp: Rp) => string): Row[] {
  const rows = new Map<string, Row>();
  for (const rp of rps) {
    const key = keyOf(rp);
    const row = rows.get(key) ?? { key, hostname: rp.parentProviderName, resourceClass: rp.resourceClass, total: 0, used: 0, reserved: 0 };
    row.total += rp.total;
    row.used += rp.used;
    row.reserved += rp.reserved;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.key.localeCompare(b.key, undefined, { numeric: true }));
}

function CapacitySection({ session }: { session: Session }) {
  const { data, error } = usePolled(() => gql<{ resourceProviders: Rp[] }>(session.token, `{ resourceProviders { parentProviderName resourceClass total reserved used } }`), EVERY_MS, [session.token]);
  const rps = data?.resourceProviders ?? [];
  const fleet = sum(rps, (rp) => rp.resourceClass);
  const hosts = sum(rps, (rp) => `${rp.parentProviderName} ${rp.resourceClass}`);
  return (
    <section aria-labelledby="capacity-title" className="capacity">
      <h2 id="capacity-title">Capacity</h2>
      <p className="legend muted">
        <span className="used" />
        used
        <span className="reserved" />
        reserved
        <span className="free" />
        free
      </p>
      <ErrorNote error={error} />
      {data && fleet.length === 0 ? <p>No host has reported an accelerator yet.</p> : null}
      <CapacityTable rows={fleet} label={(r) => r.resourceClass} testid="fleet-capacity" caption="Across the fleet, per resource class" />
      {hosts.length > 0 ? <h3>Per host</h3> : null}
      <CapacityTable rows={hosts} label={(r) => `${r.hostname} ${r.resourceClass}`} testid="host-capacity" caption="Per host and resource class" host />
    </section>
  );
}

function CapacityTable({ rows, label, testid, caption, host }: { rows: Row[]; label(r: Row): string; testid: string; caption: string; host?: boolean }) {
  if (rows.length === 0) return null;
  return (
    <table data-testid={testid}>
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr>
          {host ? <th scope="col">Host</th> : null}
          <th scope="col">Class</th>
          <th scope="col" className="num">Free</th>
          <th scope="col" className="num">Used</th>
          <th scope="col" className="num">Reserved</th>
          <th scope="col" className="num">Total</th>
          <th scope="col">
            <span className="sr-only">Bar</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-row={label(r)}>
            {host ? (
              <th scope="row">
                <Link to={`/hosts/${encodeURIComponent(r.hostname)}`}>{r.hostname}</Link>
              </th>
            ) : null}
            {host ? <td>{r.resourceClass}</td> : <th scope="row">{r.resourceClass}</th>}
            <td className="num" data-testid="free">{freeOf(r)}</td>
            <td className="num" data-testid="used">{r.used}</td>
            <td className="num" data-testid="reserved">{r.reserved}</td>
            <td className="num" data-testid="total">{r.total}</td>
            <td className="bar-cell">
              <CapacityBar capacity={r} label={label(r)} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function BindsSection({ session }: { session: Session }) {
  const { data, error } = usePolled(() => gql<{ bindOutcomes: Outcomes }>(session.token, OUTCOMES).then((d) => d.bindOutcomes), EVERY_MS, [session.token]);
  const total = (data?.bound ?? 0) + (data?.failed ?? 0);
  return (
    <section aria-labelledby="binds-title">
      <h2 id="binds-title">Binds in the last hour</h2>
      <ErrorNote error={error} />
      {data ? (
        <>
          <p data-testid="bind-totals">
            <span className="badge ok">{data.bound} bound</span> <span className="badge bad">{data.failed} failed</span>{" "}
            {total > 0 ? <span className="muted">{Math.round((100 * data.failed) / total)}% failed</span> : <span className="muted">no bind ended</span>}
            {data.truncated ? <span className="muted"> (more than one answer reads: the counts stop early)</span> : null}
          </p>
          <OutcomeChart minutes={data.minutes} />
          <h3>Recent failures</h3>
          {data.recentFailures.length === 0 ? <p className="muted">No bind failed in the last hour.</p> : null}
          <ol className="failures" data-testid="recent-failures">
            {data.recentFailures.map((f) => (
              <li key={`${f.arqUuid}-${f.at}`}>
                <time dateTime={f.at}>{new Date(f.at).toLocaleTimeString()}</time> ARQ{" "}
                <Link to={`/arqs?arq=${f.arqUuid}`} className="mono" title={f.arqUuid}>
                  {f.arqUuid.slice(0, 8)}
                </Link>
                : <span data-testid="failure-reason">{f.reason}</span>
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}

const ago = (iso: string | null) => {
  if (!iso) return "no report since the service started";
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
};
const RANK: Record<Liveness["liveness"], number> = { GONE: 0, STALE: 1, LIVE: 2 };

function AgentsSection({ session }: { session: Session }) {
  const { data, error } = usePolled(() => loadHosts(session.token), EVERY_MS, [session.token]);
  const agents = [...(data?.agents.values() ?? [])].sort((a, b) => RANK[a.liveness] - RANK[b.liveness] || a.hostname.localeCompare(b.hostname, undefined, { numeric: true }));
  const silent = agents.filter((a) => a.liveness !== "LIVE").length;
  return (
    <section aria-labelledby="agents-title">
      <h2 id="agents-title">Agents</h2>
      <ErrorNote error={error} />
      {data ? <p data-testid="agent-totals">{`${agents.length - silent} live, ${silent} not reporting`}</p> : null}
      <table data-testid="agents">
        <caption className="sr-only">Each host's agent, those not reporting first</caption>
        <thead>
          <tr>
            <th scope="col">Host</th>
            <th scope="col">Agent</th>
            <th scope="col">Last report</th>
          </tr>
        </thead>
        <tbody>
          {agents.slice(0, 20).map((a) => (
            <tr key={a.hostname} data-row={a.hostname}>
              <th scope="row">
                <Link to={`/hosts/${encodeURIComponent(a.hostname)}`}>{a.hostname}</Link>
              </th>
              <td>
                <AgentBadge agent={a} />
              </td>
              <td title={a.lastReportAt ?? undefined}>{ago(a.lastReportAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {agents.length > 20 ? <Link to="/hosts">All {agents.length} hosts</Link> : null}
    </section>
  );
}

function group(held: Held[], keyOf: (a: Held) => string) {
  const out = new Map<string, { key: string; arqs: number; instances: Set<string>; hosts: Set<string>; project: string }>();
  for (const a of held) {
    const key = keyOf(a);
    const g = out.get(key) ?? { key, arqs: 0, instances: new Set<string>(), hosts: new Set<string>(), project: a.projectId ?? "-" };
    g.arqs++;
    if (a.instanceUuid) g.instances.add(a.instanceUuid);
    if (a.hostname) g.hosts.add(a.hostname);
    out.set(key, g);
  }
  return [...out.values()].sort((a, b) => b.arqs - a.arqs || a.key.localeCompare(b.key));
}

function HoldingsSection({ session }: { session: Session }) {
  const { data, error } = usePolled(() => gql<{ acceleratorRequests: { totalCount: number; nodes: Held[] } }>(session.token, HELD).then((d) => d.acceleratorRequests), EVERY_MS, [session.token]);
  const held = data?.nodes ?? [];
  const projects = group(held, (a) => a.projectId ?? "-");
  const instances = group(held, (a) => a.instanceUuid ?? "-");
  return (
    <section aria-labelledby="holdings-title">
      <h2 id="holdings-title">Who holds accelerators</h2>
      <ErrorNote error={error} />
      {data ? (
        <p data-testid="holding-totals">
          {data.totalCount} bound ARQs, {instances.length} instances, {projects.length} projects
          {data.totalCount > held.length ? <span className="muted"> (the first {held.length} counted)</span> : null}
        </p>
      ) : null}
      <table data-testid="projects">
        <caption className="sr-only">Bound accelerators per project</caption>
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col" className="num">ARQs</th>
            <th scope="col" className="num">Instances</th>
          </tr>
        </thead>
        <tbody>
          {projects.map((p) => (
            <tr key={p.key} data-row={p.key}>
              <th scope="row">{p.key}</th>
              <td className="num" data-testid="arqs">{p.arqs}</td>
              <td className="num" data-testid="instances">{p.instances.size}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table data-testid="instances">
        <caption className="sr-only">Bound accelerators per instance</caption>
        <thead>
          <tr>
            <th scope="col">Instance</th>
            <th scope="col">Project</th>
            <th scope="col" className="num">ARQs</th>
            <th scope="col">Hosts</th>
          </tr>
        </thead>
        <tbody>
          {instances.slice(0, 20).map((i) => (
            <tr key={i.key} data-row={i.key}>
              <th scope="row">
                <Link to={`/arqs?instance=${i.key}`} className="mono" title={i.key}>
                  {i.key.slice(0, 8)}
                </Link>
              </th>
              <td>{i.project}</td>
              <td className="num" data-testid="arqs">{i.arqs}</td>
              <td>{[...i.hosts].join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
