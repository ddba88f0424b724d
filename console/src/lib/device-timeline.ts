/**
 * A device's health loop told in plain words from its audit history (`history(uuid)`, oldest
 * first): health reports, taints, eviction notices, holders leaving, cleans and their outcomes,
 * failures and re-qualification. Other events of the device (attributes, deployables) are left to
 * the History page. Where the device is now is the service's `lifecycleState`; the timeline only
 * marks the moment its history shows it drained (a NoExecute taint standing and nothing holding it).
 */

/** One entry of `history`, as the device page asks for it. */
export interface HistoryNode {
  position: string;
  type: string;
  summary: string;
  principal: string;
  at: string | null;
  recordedAt: string;
  data: Record<string, any>;
}

export type Tone = "ok" | "warn" | "bad" | "info";

export interface TimelineEntry {
  /** The log position of the event it tells (a derived entry shares its event's). */
  key: string;
  at: string;
  step: string;
  text: string;
  tone: Tone;
}

const reasonsOf = (health: { status: string; reasons: Array<{ message: string }> }) =>
  health.reasons.length ? `: ${health.reasons.map((r) => r.message).join("; ")}` : "";

type Teller = (d: Record<string, any>) => Omit<TimelineEntry, "key" | "at"> | null;

const TELL: Record<string, Teller> = {
  DeviceDiscovered: (d) => ({ step: "Discovered", text: `${d.type} ${d.vendor} ${d.model} reported on ${d.hostname}`, tone: "info" }),
  DeviceHealthChanged: (d) => ({
    step: "Health",
    text: `the driver reported ${d.health.status}${reasonsOf(d.health)}`,
    tone: d.health.status === "OK" ? "ok" : d.health.status === "CRITICAL" ? "bad" : "warn",
  }),
  DeviceTainted: (d) => ({
    step: "Tainted",
    text: `${d.taint.effect === "NoExecute" ? "NoExecute (holders must move)" : "NoSchedule (no new binds)"}, ${d.taint.key}, by ${d.taint.by}: ${d.taint.reason}`,
    tone: d.taint.effect === "NoExecute" ? "bad" : "warn",
  }),
  DeviceUntainted: (d) => ({ step: "Taint removed", text: `${d.effect} ${d.key}, by ${d.by}${d.reason ? `: ${d.reason}` : ""}`, tone: "ok" }),
  AttachHandleAllocated: (d) => ({ step: "Taken", text: `ARQ ${d.arqUuid} took an attach handle for instance ${d.instanceUuid}`, tone: "info" }),
  AttachHandleReleased: (d) => ({ step: "Let go", text: `ARQ ${d.arqUuid} let go of its attach handle`, tone: "info" }),
  ArqEvictionRequested: (d) => ({
    step: "Eviction requested",
    text: `ARQ ${d.arqUuid}${d.instanceUuid ? ` (instance ${d.instanceUuid})` : ""} asked to move by ${new Date(d.deadline).toLocaleString()}: ${d.reason}`,
    tone: "warn",
  }),
  DeviceLost: (d) => ({ step: "Lost", text: `left the host's report while held by ARQ ${d.arqUuids.join(", ")}`, tone: "bad" }),
  DeviceCleaningRequirementSet: (d) => ({ step: "Cleaning rule", text: `${d.required ? "a clean is required" : "no clean is required"} after each use (by ${d.by})`, tone: "info" }),
  DeviceCleaningRequested: (d) => ({ step: "Cleaning requested", text: d.reason, tone: "warn" }),
  DeviceCleaned: (d) => ({ step: "Cleaned", text: `in ${d.durationMs} ms by ${d.command.join(" ")}; waiting for a healthy report`, tone: "ok" }),
  DeviceCleaningFailed: (d) => ({ step: "Cleaning failed", text: d.reason, tone: "bad" }),
  DeviceFailed: (d) => ({ step: "Failed", text: `${d.reason}. It stays out of service until an operator has it cleaned again.`, tone: "bad" }),
  DeviceQualified: () => ({ step: "Qualified", text: "healthy after its clean: offered to new binds again", tone: "ok" }),
};

/**
 * Follows the event into who holds the device (its handles taken) and its NoExecute taints, and
 * says whether this event drained it: the last holder let go under a NoExecute taint, or the
 * first NoExecute taint came while nothing held it.
 */
function drains(e: HistoryNode, held: Set<string>, noExecute: Set<string>): boolean {
  const d = e.data;
  switch (e.type) {
    case "AttachHandleAllocated":
      held.add(d.handleUuid);
      return false;
    case "AttachHandleReleased":
      return held.delete(d.handleUuid) && held.size === 0 && noExecute.size > 0;
    case "DeviceTainted": {
      if (d.taint.effect !== "NoExecute") return false;
      const first = noExecute.size === 0;
      noExecute.add(d.taint.key);
      return first && held.size === 0;
    }
    case "DeviceUntainted":
      if (d.effect === "NoExecute") noExecute.delete(d.key);
      return false;
    default:
      return false;
  }
}

export function deviceTimeline(nodes: readonly HistoryNode[]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const held = new Set<string>();
  const noExecute = new Set<string>();
  for (const e of nodes) {
    const told = TELL[e.type]?.(e.data);
    if (!told) continue;
    const at = e.at ?? e.recordedAt;
    out.push({ key: e.position, at, ...told });
    if (drains(e, held, noExecute)) {
      out.push({ key: `${e.position}-drained`, at, step: "Drained", text: "nothing holds the device any more; it takes no new binds while the NoExecute taint stands", tone: "warn" });
    }
  }
  return out;
}
