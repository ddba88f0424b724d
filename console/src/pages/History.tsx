import { useState, type FormEvent } from "react";
import { ErrorNote, type Session } from "../lib/session";
import { gql } from "../lib/api";
import { usePolled } from "../lib/hooks";
import { navigate } from "../lib/router";

interface Event {
  revision: number;
  position: string;
  type: string;
  summary: string;
  data: unknown;
  metadata: { principal?: string; correlationId?: string; causationId?: string; at?: string };
  recordedAt: string;
}

const PAGE = 100;
const HISTORY = `query($stream: String!, $from: Int, $first: Int) { streamHistory(stream: $stream, fromRevision: $from, first: $first) {
  revision position type summary data metadata recordedAt } }`;
// What the picker offers: each host, device profile and the newest ARQs.
const STREAMS = `{ resourceProviders { parentProviderName } deviceProfiles { name } acceleratorRequests(first: 50) { nodes { uuid state deviceProfileName } } }`;

interface Streams {
  resourceProviders: Array<{ parentProviderName: string }>;
  deviceProfiles: Array<{ name: string }>;
  acceleratorRequests: { nodes: Array<{ uuid: string; state: string; deviceProfileName: string }> };
}

/** A picker of the streams an operator looks at most: hosts, device profiles, recent ARQs. */
function StreamPicker({ session, stream }: { session: Session; stream: string }) {
  const { data } = usePolled(() => gql<Streams>(session.token, STREAMS), 0, [session.token]);
  const hosts = [...new Set(data?.resourceProviders.map((r) => r.parentProviderName) ?? [])].sort();
  return (
    <label>
      Pick{" "}
      <select aria-label="Pick a stream" value={stream} onChange={(e) => e.target.value && navigate(`/history?stream=${encodeURIComponent(e.target.value)}`)}>
        <option value="">a host, profile or ARQ…</option>
        <optgroup label="Hosts">
          {hosts.map((h) => (
            <option key={h} value={`host-${h}`}>
              {h}
            </option>
          ))}
        </optgroup>
        <optgroup label="Device profiles">
          {data?.deviceProfiles.map((p) => (
            <option key={p.name} value={`deviceProfile-${p.name}`}>
              {p.name}
            </option>
          ))}
        </optgroup>
        <optgroup label="Accelerator requests">
          {data?.acceleratorRequests.nodes.map((a) => (
            <option key={a.uuid} value={`arq-${a.uuid}`}>
              {`${a.uuid.slice(0, 8)} ${a.deviceProfileName} ${a.state}`}
            </option>
          ))}
        </optgroup>
      </select>
    </label>
  );
}

/** The history of one object: its stream's events, oldest first, with who, when and the correlation id. */
export function HistoryPage({ session, stream }: { session: Session; stream: string }) {
  const [input, setInput] = useState(stream);
  const [pages, setPages] = useState(1);
  const { data, error } = usePolled(
    async () => (stream ? (await gql<{ streamHistory: Event[] }>(session.token, HISTORY, { stream, from: 0, first: PAGE * pages })).streamHistory : []),
    0,
    [session.token, stream, pages],
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setPages(1);
    navigate(`/history?stream=${encodeURIComponent(input.trim())}`);
  };
  if (!session.can("audit:read")) return <p>This token may not read the history (it needs audit:read: admin).</p>;
  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <form className="filters" onSubmit={submit}>
        <label htmlFor="stream">Stream</label>
        <input id="stream" className="mono" value={input} onChange={(e) => setInput(e.target.value)} placeholder="arq-<uuid>, host-<hostname>, deviceProfile-<name>, instance-<uuid>" size={48} />
        <button type="submit">Show</button>
        <StreamPicker session={session} stream={stream} />
      </form>
      {!stream ? <p className="muted">Pick a host, a device profile or an ARQ, or type a stream name.</p> : null}
      <ErrorNote error={error} />
      {stream && data?.length === 0 ? <p>No event in {stream}.</p> : null}
      <ol className="timeline">
        {data?.map((e) => (
          <li key={e.revision}>
            <div className="when">
              <time dateTime={e.recordedAt}>{new Date(e.recordedAt).toLocaleString()}</time> <span className="muted">#{e.revision}</span>
            </div>
            <div>
              <span data-testid="summary">{e.summary}</span>{" "}
              <span className="muted">
                <span className="mono">{e.type}</span>, correlation <span className="mono">{e.metadata.correlationId}</span>
              </span>
              <details>
                <summary>data</summary>
                <pre>{JSON.stringify(e.data, null, 2)}</pre>
              </details>
            </div>
          </li>
        ))}
      </ol>
      {data && data.length === PAGE * pages ? (
        <button type="button" onClick={() => setPages((p) => p + 1)}>
          Load more
        </button>
      ) : null}
    </section>
  );
}
