import { useEffect, useState } from "react";
import { ErrorNote, type Session } from "../lib/session";
import { gql, subscriptions } from "../lib/api";
import { usePolled } from "../lib/hooks";
import { Link, useLocation } from "../lib/router";
import { PAGE_SIZE } from "./Pager";
import { ArqExplanation } from "./ArqExplanation";

interface Arq {
  uuid: string;
  state: string;
  deviceProfileName: string;
  hostname: string | null;
  instanceUuid: string | null;
  projectId: string | null;
  attachHandleType: string | null;
  updatedAt: string | null;
  createdAt: string;
}
interface BindEvent {
  tag: string;
  status: "COMPLETED" | "FAILED";
  reason: string | null;
  arq: Arq;
  at: Date;
}

const FIELDS = `uuid state deviceProfileName hostname instanceUuid projectId attachHandleType updatedAt createdAt`;
const ARQS = `query($filter: ArqFilter, $after: String, $first: Int) { acceleratorRequests(filter: $filter, first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor } nodes { ${FIELDS} } } }`;
const ONE = `query($uuid: ID!) { acceleratorRequest(uuid: $uuid) { ${FIELDS} attachHandleInfo bindFailureReason } }`;
// ARQs created, unbound or deleted by anyone: the list reloads (the audit feed: admin's).
const CHANGES = `subscription { events(streamPrefix: "arq-", types: ["ArqCreated", "ArqUnbound", "ArqDeleted"]) { position } }`;
// The subscription compute schedulers use; with no filter, every bind this token may see.
const BOUND = `subscription { acceleratorRequestBound { tag status reason arq { ${FIELDS} } } }`;
const STATES = ["", "INITIAL", "BIND_STARTED", "BOUND", "UNBOUND", "BIND_FAILED", "DELETING"];

// The states in which an ARQ waits for a device (or its bind failed): its detail explains why.
const UNPLACED = new Set(["INITIAL", "UNBOUND", "BIND_FAILED"]);

type Filter = { state: string; hostname: string; deviceProfileName: string; instanceUuid: string };

export function ArqsPage({ session }: { session: Session }) {
  const loc = useLocation();
  const [filter, setFilter] = useState<Filter>({ state: "", hostname: "", deviceProfileName: "", instanceUuid: loc.query.get("instance") ?? "" });
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const [live, setLive] = useState<"connecting" | "live" | "closed">("connecting");
  const [events, setEvents] = useState<BindEvent[]>([]);
  const after = cursors.at(-1) ?? null;
  const apiFilter = Object.fromEntries(Object.entries(filter).filter(([, v]) => v.trim() !== "").map(([k, v]) => [k, v.trim()]));
  const { data, error, setData, reload } = usePolled(
    () => gql<{ acceleratorRequests: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: Arq[] } }>(session.token, ARQS, { filter: apiFilter, after, first: PAGE_SIZE }).then((d) => d.acceleratorRequests),
    5000,
    [session.token, JSON.stringify(apiFilter), after],
  );

  // Live state changes: the same acceleratorRequestBound subscription Nova uses.
  useEffect(() => {
    setLive("connecting");
    const client = subscriptions(session.token);
    const offConnected = client.on("connected", () => setLive("live"));
    const offClosed = client.on("closed", () => setLive("closed"));
    const stop = client.subscribe<{ acceleratorRequestBound: Omit<BindEvent, "at"> }>(
      { query: BOUND },
      {
        next: ({ data: d }) => {
          if (!d) return;
          const e = { ...d.acceleratorRequestBound, at: new Date() };
          setEvents((list) => [e, ...list].slice(0, 20));
          setData((page) => (page ? { ...page, nodes: page.nodes.map((a) => (a.uuid === e.arq.uuid ? { ...a, ...e.arq } : a)) } : page));
        },
        error: () => setLive("closed"),
        complete: () => setLive("closed"),
      },
    );
    return () => {
      stop();
      offConnected();
      offClosed();
    };
  }, [session.token, setData]);

  // New rows as ARQs are created, not at the next refresh.
  const watchesLog = session.can("audit:read");
  useEffect(() => {
    if (!watchesLog) return;
    // A burst of creations is one reload.
    let pending: ReturnType<typeof setTimeout> | undefined;
    const next = () => (pending ??= setTimeout(() => ((pending = undefined), void reload()), 250));
    const stop = subscriptions(session.token).subscribe({ query: CHANGES }, { next, error: () => undefined, complete: () => undefined });
    return () => {
      stop();
      clearTimeout(pending);
    };
  }, [session.token, watchesLog, reload]);

  const setField = (k: keyof Filter, v: string) => {
    setFilter((f) => ({ ...f, [k]: v }));
    setCursors([null]);
  };
  const selected = loc.query.get("arq");
  return (
    <section aria-labelledby="arqs-title">
      <div className="titlebar">
        <h1 id="arqs-title">Accelerator requests</h1>
        <span className={`badge ${live === "live" ? "ok" : "warn"}`} data-testid="live" title="acceleratorRequestBound subscription">
          {live === "live" ? "live" : live}
        </span>
      </div>
      {selected ? <ArqDetail session={session} uuid={selected} /> : null}
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter accelerator requests">
        <label>
          State{" "}
          <select value={filter.state} onChange={(e) => setField("state", e.target.value)}>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s || "any"}
              </option>
            ))}
          </select>
        </label>
        <label>
          Host <input value={filter.hostname} onChange={(e) => setField("hostname", e.target.value)} />
        </label>
        <label>
          Profile <input value={filter.deviceProfileName} onChange={(e) => setField("deviceProfileName", e.target.value)} />
        </label>
        <label>
          Instance <input value={filter.instanceUuid} onChange={(e) => setField("instanceUuid", e.target.value)} placeholder="uuid" />
        </label>
      </form>
      <ErrorNote error={error} />
      <table>
        <caption className="sr-only">Accelerator requests, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">ARQ</th>
            <th scope="col">State</th>
            <th scope="col">Profile</th>
            <th scope="col">Host</th>
            <th scope="col">Instance</th>
            <th scope="col">Project</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {data?.nodes.map((a) => (
            <tr key={a.uuid} data-arq={a.uuid}>
              <th scope="row">
                <Link to={`/arqs?arq=${a.uuid}`} className="mono" title={a.uuid}>
                  {a.uuid.slice(0, 8)}
                </Link>
              </th>
              <td>
                <span className={`badge state-${a.state}`} data-testid="arq-state">
                  {a.state}
                </span>
              </td>
              <td>{a.deviceProfileName}</td>
              <td>{a.hostname ? <Link to={`/hosts/${encodeURIComponent(a.hostname)}`}>{a.hostname}</Link> : ""}</td>
              <td className="mono">{a.instanceUuid?.slice(0, 8) ?? ""}</td>
              <td>{a.projectId ?? ""}</td>
              <td>{new Date(a.updatedAt ?? a.createdAt).toLocaleTimeString()}</td>
            </tr>
          ))}
          {data && data.nodes.length === 0 ? (
            <tr>
              <td colSpan={7}>No accelerator request{Object.keys(apiFilter).length ? " matches" : " yet"}.</td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <nav className="pager" aria-label="Accelerator request pages">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Previous
        </button>
        <span>{data ? `${data.totalCount} in all` : ""}</span>
        <button type="button" disabled={!data?.pageInfo.hasNextPage} onClick={() => setCursors((c) => [...c, data!.pageInfo.endCursor])}>
          Next
        </button>
      </nav>
      <h2>Binds as they happen</h2>
      <ol className="feed" aria-live="polite">
        {events.map((e, i) => (
          <li key={`${e.tag}-${i}`}>
            {e.at.toLocaleTimeString()} ARQ <span className="mono">{e.tag.slice(0, 8)}</span>{" "}
            <span className={`badge ${e.status === "COMPLETED" ? "ok" : "bad"}`}>{e.status}</span> {e.arq.hostname ?? ""} {e.reason ?? ""}
          </li>
        ))}
        {events.length === 0 ? <li className="muted">No bind since this page opened.</li> : null}
      </ol>
    </section>
  );
}

function ArqDetail({ session, uuid }: { session: Session; uuid: string }) {
  const { data, error } = usePolled(() => gql<{ acceleratorRequest: (Arq & { attachHandleInfo: unknown; bindFailureReason: string | null }) | null }>(session.token, ONE, { uuid }).then((d) => d.acceleratorRequest), 5000, [uuid]);
  return (
    <aside className="detail" aria-label={`ARQ ${uuid}`}>
      <h2>
        ARQ <span className="mono">{uuid}</span>
      </h2>
      <ErrorNote error={error} />
      {data === null ? <p>No such ARQ (or not visible to this token).</p> : null}
      {data ? (
        <dl>
          <dt>State</dt>
          <dd>{data.state}</dd>
          {data.bindFailureReason ? (
            <>
              <dt>Why the bind failed</dt>
              <dd data-testid="bind-failure-reason">{data.bindFailureReason}</dd>
            </>
          ) : null}
          <dt>Profile</dt>
          <dd>{data.deviceProfileName}</dd>
          <dt>Host</dt>
          <dd>{data.hostname ?? "-"}</dd>
          <dt>Instance</dt>
          <dd className="mono">{data.instanceUuid ?? "-"}</dd>
          <dt>Attach handle</dt>
          <dd className="mono">{data.attachHandleType ? `${data.attachHandleType} ${JSON.stringify(data.attachHandleInfo)}` : "-"}</dd>
        </dl>
      ) : null}
      {data && UNPLACED.has(data.state) ? (
        session.can("resource_provider:read") ? <ArqExplanation session={session} uuid={uuid} /> : <p className="muted">Why it is not bound needs a token allowed resource_provider:read.</p>
      ) : null}
      {session.can("audit:read") ? <Link to={`/history?stream=arq-${uuid}`}>History of this ARQ</Link> : null}{" "}
      <Link to="/arqs">Close</Link>
    </aside>
  );
}
