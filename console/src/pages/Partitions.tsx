/** A partitioned device on the host page: its slots as a bar (who holds each span), counters used and free, and each profile's room now. */
export interface DevicePartitioning {
  counters: Array<{ name: string; total: number; used: number }>;
  slots: { total: number; used: number };
  profiles: Array<{ name: string; resourceClass: string; made: number; free: number; canHoldNow: number }>;
  partitions: Array<{ uuid: string | null; profile: string; placement: { start: number; size: number } | null; status: string; arqUuid: string | null }>;
}

export const PARTITIONING_FIELDS = `partitioning { counters { name total used } slots { total used }
  profiles { name resourceClass made free canHoldNow } partitions { uuid profile placement { start size } status arqUuid } }`;

const STATUS_WORDS: Record<string, string> = { READY: "", CREATING: "being made", DESTROYING: "being destroyed" };

export function PartitionSlices({ p }: { p: DevicePartitioning }) {
  const spans = p.partitions.filter((x) => x.placement).sort((a, b) => a.placement!.start - b.placement!.start);
  const cells: Array<{ start: number; size: number; label: string; title: string; state: string }> = [];
  let next = 0;
  for (const s of spans) {
    for (; next < s.placement!.start; next++) cells.push({ start: next, size: 1, label: "free", title: `slot ${next} free`, state: "free" });
    const who = s.arqUuid ? `held by ARQ ${s.arqUuid.slice(0, 8)}` : "free to take";
    const words = STATUS_WORDS[s.status] ?? s.status;
    cells.push({ start: s.placement!.start, size: s.placement!.size, label: s.profile, title: `${s.profile} ${s.uuid ?? ""} ${words} ${who}`.trim(), state: s.status === "READY" ? (s.arqUuid ? "used" : "idle") : "busy" });
    next = s.placement!.start + s.placement!.size;
  }
  for (; next < p.slots.total; next++) cells.push({ start: next, size: 1, label: "free", title: `slot ${next} free`, state: "free" });
  return (
    <div className="partitions" aria-label="Partitions">
      <p>
        {p.counters.map((c) => `${c.total - c.used} of ${c.total} ${c.name} slices free`).join(", ")}
        {p.slots.total > 0 ? `; ${p.slots.total - p.slots.used} of ${p.slots.total} slots free` : ""}
      </p>
      {p.slots.total > 0 ? (
        <ol className="slot-bar" style={{ gridTemplateColumns: `repeat(${p.slots.total}, 1fr)` }} aria-label="Slots, in order">
          {cells.map((c) => (
            <li key={c.start} className={`slot ${c.state}`} style={{ gridColumn: `span ${c.size}` }} title={c.title}>
              {c.label}
            </li>
          ))}
        </ol>
      ) : null}
      <table aria-label="Partition profiles">
        <thead>
          <tr>
            <th>Profile</th>
            <th>Resource class</th>
            <th>Made</th>
            <th>Free</th>
            <th>Can hold now</th>
          </tr>
        </thead>
        <tbody>
          {p.profiles.map((x) => (
            <tr key={x.name}>
              <td>{x.name}</td>
              <td className="mono">{x.resourceClass}</td>
              <td>{x.made}</td>
              <td>{x.free}</td>
              <td>{x.canHoldNow}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
