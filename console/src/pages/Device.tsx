import { useRef, useState } from "react";
import { ErrorNote, type Session } from "../lib/session";
import { gql } from "../lib/api";
import { usePolled } from "../lib/hooks";
import { Link } from "../lib/router";
import { deviceTimeline, type HistoryNode } from "../lib/device-timeline";

interface Eviction {
  taintKey: string;
  reason: string;
  deadline: string;
  requestedAt: string;
}
interface DeviceDetail {
  uuid: string;
  type: string;
  vendor: string;
  model: string;
  hostname: string;
  lifecycleState: string;
  lost: boolean;
  health: { status: string; reasons: Array<{ code: string; message: string; count: number | null }> };
  taints: Array<{ key: string; value: string; effect: string; by: string; reason: string; at: string }>;
  holders: Array<{ arqUuid: string; instanceUuid: string | null; since: string | null; eviction: Eviction | null }>;
  cleaning: {
    required: boolean;
    inFlight: { requestId: string; reason: string; requestedAt: string } | null;
    qualifyingSince: string | null;
    failure: { reason: string; at: string } | null;
    last: { outcome: string; reason: string | null; at: string } | null;
  };
}

const DEVICE = `query($uuid: ID!) { device(uuid: $uuid) { uuid type vendor model hostname lifecycleState lost
  health { status reasons { code message count } }
  taints { key value effect by reason at }
  holders { arqUuid instanceUuid since eviction { taintKey reason deadline requestedAt } }
  cleaning { required inFlight { requestId reason requestedAt } qualifyingSince failure { reason at } last { outcome reason at } } } }`;
const HISTORY = `query($uuid: ID!, $after: String) { history(uuid: $uuid, first: 1000, after: $after) {
  pageInfo { hasNextPage endCursor } nodes { position type summary principal at recordedAt data } } }`;
const CLEAN = `mutation($uuid: ID!, $reason: String) { cleanDevice(uuid: $uuid, reason: $reason) { uuid lifecycleState } }`;

/** What each state means, for an operator who does not know the loop. */
const STATE_WORDS: Record<string, string> = {
  AVAILABLE: "Available: offered to new binds.",
  TAINTED: "Tainted: no new bind lands here; the ARQs holding it stay.",
  DRAINING: "Draining: a NoExecute taint asked the ARQs holding it to move; it waits for them to let go.",
  DRAINED: "Drained: nothing holds it; it takes no new binds while the NoExecute taint stands.",
  CLEANING: "Cleaning: the host's agent is cleaning it before its next use.",
  QUALIFYING: "Qualifying: cleaned; it is offered again once its host reports it healthy.",
  FAILED: "Failed: out of service until an operator has it cleaned again.",
};
const STATE_TONE: Record<string, string> = { AVAILABLE: "ok", TAINTED: "warn", DRAINING: "warn", DRAINED: "warn", CLEANING: "warn", QUALIFYING: "warn", FAILED: "bad" };
const when = (iso: string | null) => (iso ? <time dateTime={iso}>{new Date(iso).toLocaleString()}</time> : "unknown");

/**
 * Reads the device's history, only what came after what it read before (the log only grows); an
 * entry two overlapping refreshes both read is kept once.
 */
function useDeviceHistory(session: Session, uuid: string) {
  const seen = useRef({ uuid, nodes: [] as HistoryNode[], positions: new Set<string>(), after: null as string | null });
  return usePolled(
    async () => {
      if (!session.can("audit:read")) return null;
      if (seen.current.uuid !== uuid) seen.current = { uuid, nodes: [], positions: new Set(), after: null };
      const s = seen.current;
      for (;;) {
        const r = await gql<{ history: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: HistoryNode[] } }>(session.token, HISTORY, { uuid, after: s.after });
        for (const n of r.history.nodes) {
          if (s.positions.has(n.position)) continue;
          s.positions.add(n.position);
          s.nodes.push(n);
        }
        if (r.history.pageInfo.endCursor) s.after = r.history.pageInfo.endCursor;
        if (!r.history.pageInfo.hasNextPage) return deviceTimeline(s.nodes);
      }
    },
    5000,
    [session.token, uuid],
  );
}

/** One device: where it is in the health loop and why, its taints, who holds it, and the loop's timeline. */
export function DevicePage({ session, uuid }: { session: Session; uuid: string }) {
  const { data: device, error, reload } = usePolled(async () => (await gql<{ device: DeviceDetail | null }>(session.token, DEVICE, { uuid })).device, 5000, [session.token, uuid]);
  const { data: timeline, error: historyError } = useDeviceHistory(session, uuid);
  const [actionError, setActionError] = useState<unknown>();
  const clean = async () => {
    setActionError(undefined);
    try {
      await gql(session.token, CLEAN, { uuid, reason: "cleaned again from the console after a failure" });
      await reload();
    } catch (err) {
      setActionError(err);
    }
  };
  if (!session.can("hardware:read")) return <p>This token may not read devices (it needs hardware:read: admin or manager).</p>;
  if (device === null) return <p>No device {uuid}.</p>;
  return (
    <section aria-labelledby="device-title">
      <div className="titlebar">
        <h1 id="device-title">{device ? `Device ${device.type} ${device.vendor} ${device.model}` : "Device"}</h1>
        {device ? <Link to={`/hosts/${encodeURIComponent(device.hostname)}`}>Host {device.hostname}</Link> : null}
      </div>
      <p className="muted mono">{uuid}</p>
      <ErrorNote error={error ?? actionError} />
      {device ? <DeviceState device={device} session={session} onClean={clean} /> : <p>Loading…</p>}
      {device ? <Taints device={device} /> : null}
      {device ? <Holders device={device} /> : null}
      <h2>Timeline</h2>
      {!session.can("audit:read") ? <p className="muted">The timeline needs a token allowed audit:read (admin).</p> : null}
      <ErrorNote error={historyError} />
      <ol className="timeline" aria-label="Timeline">
        {timeline?.map((t) => (
          <li key={t.key} data-step={t.step}>
            <div className="when">{when(t.at)}</div>
            <div>
              <span className={`badge ${t.tone === "info" ? "" : t.tone}`}>{t.step}</span> {t.text}
            </div>
          </li>
        ))}
      </ol>
      {timeline?.length === 0 ? <p className="muted">Nothing in the device's history yet.</p> : null}
    </section>
  );
}

function DeviceState({ device, session, onClean }: { device: DeviceDetail; session: Session; onClean(): void }) {
  const c = device.cleaning;
  return (
    <dl aria-label="State">
      <dt>State</dt>
      <dd>
        <span className={`badge ${STATE_TONE[device.lifecycleState] ?? ""}`} data-testid="device-state">
          {device.lifecycleState}
        </span>{" "}
        <span data-testid="state-words">{STATE_WORDS[device.lifecycleState] ?? ""}</span>
        {device.lost ? <span className="badge bad"> LOST: gone from its host's report while held</span> : null}
      </dd>
      {c.failure ? (
        <>
          <dt>Why it failed</dt>
          <dd className="error" data-testid="failure">
            {c.failure.reason} ({when(c.failure.at)}){" "}
            {session.can("device:status") ? (
              <button type="button" onClick={onClean}>
                Clean again
              </button>
            ) : null}
          </dd>
        </>
      ) : null}
      {c.inFlight ? (
        <>
          <dt>Cleaning</dt>
          <dd>
            since {when(c.inFlight.requestedAt)}: {c.inFlight.reason}
          </dd>
        </>
      ) : null}
      {c.qualifyingSince ? (
        <>
          <dt>Cleaned</dt>
          <dd>{when(c.qualifyingSince)}; waiting for a healthy report</dd>
        </>
      ) : null}
      <dt>Health</dt>
      <dd>
        {device.health.status}
        {device.health.reasons.map((r) => (
          <div key={r.code + r.message}>
            <span className="mono">{r.code}</span>: {r.message}
            {r.count !== null ? ` (${r.count})` : ""}
          </div>
        ))}
      </dd>
      <dt>Cleaned after use</dt>
      <dd>{c.required ? "always (an operator requires it)" : "when a holder's profile asks for it"}</dd>
    </dl>
  );
}

function Taints({ device }: { device: DeviceDetail }) {
  return (
    <>
      <h2>Taints</h2>
      {device.taints.length === 0 ? <p className="muted">None: nothing keeps new binds away.</p> : null}
      {device.taints.length ? (
        <table aria-label="Taints">
          <thead>
            <tr>
              <th scope="col">Effect</th>
              <th scope="col">Key</th>
              <th scope="col">Who</th>
              <th scope="col">Why</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {device.taints.map((t) => (
              <tr key={`${t.key} ${t.effect}`}>
                <td>{t.effect === "NoExecute" ? "NoExecute: holders must move" : "NoSchedule: no new binds"}</td>
                <td className="mono">{t.value ? `${t.key}=${t.value}` : t.key}</td>
                <td>{t.by}</td>
                <td>{t.reason}</td>
                <td>{when(t.at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

function Holders({ device }: { device: DeviceDetail }) {
  return (
    <>
      <h2>Held by</h2>
      {device.holders.length === 0 ? <p className="muted">No ARQ holds it.</p> : null}
      {device.holders.length ? (
        <table aria-label="Holders">
          <thead>
            <tr>
              <th scope="col">ARQ</th>
              <th scope="col">Instance</th>
              <th scope="col">Since</th>
              <th scope="col">Asked to move</th>
            </tr>
          </thead>
          <tbody>
            {device.holders.map((h) => (
              <tr key={h.arqUuid} data-arq={h.arqUuid}>
                <td>
                  <Link to={`/arqs?arq=${h.arqUuid}`} className="mono">
                    {h.arqUuid}
                  </Link>
                </td>
                <td className="mono">{h.instanceUuid ?? "none"}</td>
                <td>{when(h.since)}</td>
                <td data-testid="eviction">
                  {h.eviction ? (
                    <>
                      by {when(h.eviction.deadline)}
                      {Date.parse(h.eviction.deadline) < Date.now() ? <span className="badge bad"> past the deadline</span> : null} ({h.eviction.reason}; asked{" "}
                      {when(h.eviction.requestedAt)})
                    </>
                  ) : (
                    "no"
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}
