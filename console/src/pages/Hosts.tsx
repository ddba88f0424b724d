import { useMemo, useState } from "react";
import { ErrorNote, type Session } from "../lib/session";
import { gql } from "../lib/api";
import { PARTITIONING_FIELDS, PartitionSlices, type DevicePartitioning } from "./Partitions";
import { usePolled } from "../lib/hooks";
import { Link } from "../lib/router";
import { Pager, PAGE_SIZE } from "./Pager";

export interface Rp {
  uuid: string;
  name: string;
  parentProviderName: string;
  resourceClass: string;
  total: number;
  reserved: number;
  used: number;
}

export interface Liveness {
  hostname: string;
  liveness: "LIVE" | "STALE" | "GONE";
  lastReportAt: string | null;
  notReadyReason: string | null;
}

interface HostRow {
  hostname: string;
  agent?: Liveness;
  providers: number;
  classes: string[];
  total: number;
  used: number;
  reserved: number;
}

const RPS = `{ resourceProviders { uuid name parentProviderName resourceClass total reserved used } }`;
const LIVENESS = `query($h: [String!]!) { hostStatuses(hostnames: $h) { hostname liveness lastReportAt notReadyReason } }`;
/** hostStatuses answers at most this many hosts a call. */
const STATUS_BATCH = 500;

export async function loadHosts(token: string): Promise<{ rps: Rp[]; agents: Map<string, Liveness> }> {
  const { resourceProviders: rps } = await gql<{ resourceProviders: Rp[] }>(token, RPS);
  const names = [...new Set(rps.map((rp) => rp.parentProviderName))];
  const agents = new Map<string, Liveness>();
  for (let i = 0; i < names.length; i += STATUS_BATCH) {
    const { hostStatuses } = await gql<{ hostStatuses: Liveness[] }>(token, LIVENESS, { h: names.slice(i, i + STATUS_BATCH) });
    for (const s of hostStatuses) agents.set(s.hostname, s);
  }
  return { rps, agents };
}

const AGENT_BADGE: Record<Liveness["liveness"], string> = { LIVE: "ok", STALE: "warn", GONE: "bad" };

/** The agent's liveness as a badge; its title says when it last reported, and why the host is not ready. */
export function AgentBadge({ agent }: { agent: Liveness | undefined }) {
  if (!agent) return null;
  const last = agent.lastReportAt ? `last report ${new Date(agent.lastReportAt).toLocaleString()}` : "no report since the service started";
  return (
    <span className={`badge ${AGENT_BADGE[agent.liveness]}`} data-testid="agent-liveness" title={[last, agent.notReadyReason].filter(Boolean).join(": ")}>
      {agent.liveness}
    </span>
  );
}
/** Every host, from the resource providers its devices give (one query: Placement's view of the cloud). */
export function HostsPage({ session }: { session: Session }) {
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(0);
  const { data, error, reload } = usePolled(() => loadHosts(session.token), 5000, [session.token]);
  const hosts = useMemo(() => {
    const byHost = new Map<string, HostRow>();
    for (const rp of data?.rps ?? []) {
      let h = byHost.get(rp.parentProviderName);
      if (!h) {
        const agent = data!.agents.get(rp.parentProviderName);
        byHost.set(rp.parentProviderName, (h = { hostname: rp.parentProviderName, agent, providers: 0, classes: [], total: 0, used: 0, reserved: 0 }));
      }
      h.providers++;
      if (!h.classes.includes(rp.resourceClass)) h.classes.push(rp.resourceClass);
      h.total += rp.total;
      h.used += rp.used;
      h.reserved += rp.reserved;
    }
    return [...byHost.values()].sort((a, b) => a.hostname.localeCompare(b.hostname, undefined, { numeric: true }));
  }, [data]);
  const wanted = search.trim().toLowerCase();
  const shown = wanted ? hosts.filter((h) => h.hostname.toLowerCase().includes(wanted) || h.classes.some((c) => c.toLowerCase().includes(wanted))) : hosts;
  const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const rows = shown.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE);
  if (!session.can("resource_provider:read")) return <p>This token may not read hosts (it needs resource_provider:read).</p>;
  return (
    <section aria-labelledby="hosts-title">
      <div className="titlebar">
        <h1 id="hosts-title">Hosts</h1>
        <button type="button" onClick={() => void reload()}>
          Refresh
        </button>
      </div>
      <div className="filters">
        <label htmlFor="host-search">Search</label>
        <input
          id="host-search"
          type="search"
          placeholder="host name or resource class"
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            setPage(0);
          }}
        />
        <span aria-live="polite">
          {data ? `${shown.length} of ${hosts.length} hosts` : "loading…"}
        </span>
      </div>
      <ErrorNote error={error} />
      <table>
        <caption className="sr-only">Hosts with their accelerators</caption>
        <thead>
          <tr>
            <th scope="col">Host</th>
            <th scope="col">Agent</th>
            <th scope="col">Resource classes</th>
            <th scope="col">Providers</th>
            <th scope="col" className="num">Total</th>
            <th scope="col" className="num">Used</th>
            <th scope="col" className="num">Free</th>
            <th scope="col">Maintenance</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((h) => (
            <tr key={h.hostname} className={h.agent && h.agent.liveness !== "LIVE" ? "stale" : undefined}>
              <th scope="row">
                <Link to={`/hosts/${encodeURIComponent(h.hostname)}`}>{h.hostname}</Link>
              </th>
              <td>
                <AgentBadge agent={h.agent} />
              </td>
              <td>{h.classes.join(", ")}</td>
              <td className="num">{h.providers}</td>
              <td className="num">{h.total}</td>
              <td className="num">{h.used}</td>
              <td className="num">{Math.max(0, h.total - h.used - h.reserved)}</td>
              <td>{h.reserved ? `${h.reserved} reserved` : ""}</td>
            </tr>
          ))}
          {data && rows.length === 0 ? (
            <tr>
              <td colSpan={8}>{hosts.length ? "No host matches." : "No host has reported yet: run an agent (cyborg-es agent)."}</td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <Pager label="Hosts pages" page={current} pages={pages} onPage={setPage} />
    </section>
  );
}

interface Handle {
  uuid: string;
  type: string;
  inUse: boolean;
  lost: boolean;
  info: Record<string, string>;
  acceleratorRequest: { uuid: string; state: string; instanceUuid: string | null } | null;
}
interface Device {
  uuid: string;
  type: string;
  vendor: string;
  model: string;
  status: "ENABLED" | "MAINTAINING";
  lifecycleState: string;
  taints: Array<{ key: string; value: string; effect: string; by: string; reason: string }>;
  lost: boolean;
  controlPath: { info: Record<string, string> };
  deployables: Array<{ uuid: string; name: string; resourceClass: string | null; traits: string[]; numAccelerators: number; attachHandles: Handle[] }>;
  partitioning: DevicePartitioning | null;
}

const DEVICES = `query($host: String!, $after: String) { devices(filter: { hostname: $host }, first: 50, after: $after) {
  totalCount pageInfo { hasNextPage endCursor }
  nodes { uuid type vendor model status lifecycleState taints { key value effect by reason } lost controlPath { info } ${PARTITIONING_FIELDS}
    deployables { uuid name resourceClass traits numAccelerators
      attachHandles { uuid type inUse lost info acceleratorRequest { uuid state instanceUuid } } } } } }`;
const SET_STATUS = `mutation($uuid: ID!, $status: DeviceStatus!) { setDeviceStatus(uuid: $uuid, status: $status) { uuid status } }`;

const pci = (i: Record<string, string>) => (i.domain ? `${i.domain}:${i.bus}:${i.device}.${i.function}` : i.uuid ? i.uuid : JSON.stringify(i));

/** One host's device tree: devices, their deployables and attach handles (free or used, and by which ARQ). */
export function HostPage({ session, hostname }: { session: Session; hostname: string }) {
  const load = async () => {
    const devices: Device[] = [];
    let after: string | null = null;
    do {
      const r: { devices: { nodes: Device[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await gql(session.token, DEVICES, { host: hostname, after });
      devices.push(...r.devices.nodes);
      after = r.devices.pageInfo.hasNextPage ? r.devices.pageInfo.endCursor : null;
    } while (after);
    return devices;
  };
  const { data, error, reload } = usePolled(load, 5000, [session.token, hostname]);
  const [actionError, setActionError] = useState<unknown>();
  const [busy, setBusy] = useState<string>();
  const toggle = async (d: Device) => {
    setBusy(d.uuid);
    setActionError(undefined);
    try {
      await gql(session.token, SET_STATUS, { uuid: d.uuid, status: d.status === "ENABLED" ? "MAINTAINING" : "ENABLED" });
      await reload();
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(undefined);
    }
  };
  if (!session.can("hardware:read")) return <p>This token may not read devices (it needs hardware:read: admin or manager).</p>;
  return (
    <section aria-labelledby="host-title">
      <div className="titlebar">
        <h1 id="host-title">Host {hostname}</h1>
        <Link to="/hosts">All hosts</Link>
        {session.can("audit:read") ? <Link to={`/history?stream=${encodeURIComponent(`host-${hostname}`)}`}>History</Link> : null}
      </div>
      <ErrorNote error={error ?? actionError} />
      {data && data.length === 0 ? <p>No device on this host.</p> : null}
      {data?.map((d) => {
        const handles = d.deployables.flatMap((dep) => dep.attachHandles);
        const used = handles.filter((h) => h.inUse).length;
        return (
          <article key={d.uuid} className="device" aria-labelledby={`dev-${d.uuid}`}>
            <header>
              <h2 id={`dev-${d.uuid}`}>
                {d.type} {d.vendor} {d.model} <span className="muted">at {pci(d.controlPath.info)}</span>
              </h2>
              <span className={`badge ${d.status === "ENABLED" ? "ok" : "warn"}`} data-testid="device-status">
                {d.status}
              </span>
              {d.lifecycleState !== "AVAILABLE" ? <span className="badge warn" data-testid="device-state">{d.lifecycleState}</span> : null}
              {d.lost ? <span className="badge bad">LOST</span> : null}
              <Link to={`/devices/${d.uuid}`} aria-label={`Details of the device at ${pci(d.controlPath.info)}`}>
                Details
              </Link>
              <span>
                {handles.length - used} free, {used} used of {handles.length} attach handles
              </span>
              {session.can("device:status") ? (
                <button type="button" onClick={() => void toggle(d)} disabled={busy === d.uuid} aria-pressed={d.status === "MAINTAINING"}>
                  {d.status === "ENABLED" ? "Put in maintenance" : "End maintenance"}
                </button>
              ) : null}
            </header>
            {d.taints.length > 0 ? (
              <ul className="taints" aria-label="Taints">
                {d.taints.map((t) => (
                  <li key={`${t.key} ${t.effect}`}>
                    <span className="mono">{`${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`}</span> by {t.by}: {t.reason}
                  </li>
                ))}
              </ul>
            ) : null}
            {d.partitioning ? <PartitionSlices p={d.partitioning} /> : null}
            {d.deployables.map((dep) => (
              <div key={dep.uuid} className="deployable">
                <h3>
                  {dep.name} <span className="muted">{[dep.resourceClass, ...dep.traits].filter(Boolean).join(" · ")}</span>
                </h3>
                <ul className="handles">
                  {dep.attachHandles.map((h) => (
                    <li key={h.uuid} className={h.inUse ? "used" : "free"}>
                      <span className="mono">{pci(h.info)}</span> {h.type} {h.lost ? "(lost) " : ""}
                      {h.inUse ? (
                        <>
                          used by{" "}
                          {h.acceleratorRequest ? <Link to={`/arqs?arq=${h.acceleratorRequest.uuid}`}>ARQ {h.acceleratorRequest.uuid.slice(0, 8)}</Link> : "an ARQ"}
                        </>
                      ) : (
                        "free"
                      )}
                    </li>
                  ))}
                </ul>
              </div>
            ))}
          </article>
        );
      })}
    </section>
  );
}
