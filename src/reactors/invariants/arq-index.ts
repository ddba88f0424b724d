/**
 * What the invariant checker knows of each ARQ from the events it read: the ARQ (folded with the
 * ARQ decider's evolve), the handles hosts allocated to it, whether its profile recorded it, and
 * which project's quota holds a claim for it.
 * Only a filter: an ARQ it finds in violation is checked again on the streams themselves by the
 * application before anything is repaired.
 */
import type { ArqStreamState } from "../../domain/arqs/arq.js";
import { evolveArq, initialArqState } from "../../domain/arqs/decider.js";
import type { ArqEvent } from "../../domain/arqs/events.js";
import { arqViolations, type HeldHandle, type Violation } from "../../domain/arqs/invariants.js";
import type { RecordedEvent } from "../../infra/eventstore/port.js";

interface Entry {
  arq: ArqStreamState;
  /** By hostname: the handle that host allocated to the ARQ. */
  handles: Map<string, HeldHandle>;
  recorded: boolean;
  /** The project whose quota holds a claim for the ARQ. */
  claimedBy: string | null;
}

type AllocatedData = { hostname: string; arqUuid: string; rpUuid: string; instanceUuid: string; handleUuid: string };

export class ArqIndex {
  private readonly entries = new Map<string, Entry>();

  /** Applies one event of the log; the ARQs it concerns. */
  apply(e: RecordedEvent): string[] {
    if (e.stream.startsWith("arq-")) {
      const { arqUuid } = e.data as { arqUuid: string };
      const entry = this.entry(arqUuid);
      entry.arq = slim(evolveArq(entry.arq, { type: e.type, data: e.data } as ArqEvent));
      return [arqUuid];
    }
    if (e.type === "AttachHandleAllocated") {
      const d = e.data as AllocatedData;
      this.entry(d.arqUuid).handles.set(d.hostname, { hostname: d.hostname, rpUuid: d.rpUuid, instanceUuid: d.instanceUuid, handleUuid: d.handleUuid });
      return [d.arqUuid];
    }
    if (e.type === "AttachHandleReleased") {
      const d = e.data as { hostname: string; arqUuid: string };
      this.entry(d.arqUuid).handles.delete(d.hostname);
      return [d.arqUuid];
    }
    if (e.type === "QuotaClaimed" || e.type === "QuotaBackfilled" || e.type === "QuotaReleased") {
      const d = e.data as { projectId: string; claims?: ReadonlyArray<{ arqUuid: string }>; arqUuids?: readonly string[] };
      const claimed = e.type !== "QuotaReleased";
      const arqUuids = claimed ? (d.claims ?? []).map((c) => c.arqUuid) : [...(d.arqUuids ?? [])];
      for (const id of arqUuids) this.entry(id).claimedBy = claimed ? d.projectId : null;
      return arqUuids;
    }
    if (e.type === "DeviceProfileArqsCreated" || e.type === "DeviceProfileArqsDeleted") {
      const { arqUuids } = e.data as { arqUuids: string[] };
      for (const id of arqUuids) this.entry(id).recorded = e.type === "DeviceProfileArqsCreated";
      return arqUuids;
    }
    return [];
  }

  /** The violations the events read show for the ARQ (the profile taken as present). */
  violations(arqUuid: string): Violation[] {
    const entry = this.entries.get(arqUuid);
    if (!entry) return [];
    const found = arqViolations({ arq: entry.arq, allocations: [...entry.handles.values()], recorded: entry.recorded, claimedBy: entry.claimedBy });
    // A deleted ARQ that holds nothing and is not counted is done with: forget it.
    if (found.length === 0 && entry.arq.status === "deleted" && entry.handles.size === 0 && entry.claimedBy === null) this.entries.delete(arqUuid);
    return found;
  }

  /** The project whose quota claims the ARQ, as the events read say (for the application's check). */
  claimedBy(arqUuid: string): string | null {
    return this.entries.get(arqUuid)?.claimedBy ?? null;
  }

  /** The hosts that allocated the ARQ a handle (for the application's check). */
  hostnames(arqUuid: string): string[] {
    return [...(this.entries.get(arqUuid)?.handles.keys() ?? [])];
  }

  get size(): number {
    return this.entries.size;
  }

  /** The index as a snapshot's lines (state-snapshots.ts): one ARQ a line. */
  lines(): string[] {
    return Array.from(this.entries, ([uuid, e]) => JSON.stringify([uuid, e.arq, [...e.handles.values()], e.recorded, e.claimedBy]));
  }

  /** Puts back what `lines()` gave; the ARQs it holds. */
  restore(lines: readonly string[]): string[] {
    return lines.map((line) => {
      const [uuid, arq, handles, recorded, claimedBy] = JSON.parse(line) as [string, ArqStreamState, HeldHandle[], boolean, string | null];
      this.entries.set(uuid, { arq: slim(arq), handles: new Map(handles.map((h) => [h.hostname, h])), recorded, claimedBy: claimedBy ?? null });
      return uuid;
    });
  }

  private entry(arqUuid: string): Entry {
    let entry = this.entries.get(arqUuid);
    if (!entry) this.entries.set(arqUuid, (entry = { arq: initialArqState(), handles: new Map(), recorded: false, claimedBy: null }));
    return entry;
  }
}

/** Raise it when what the index holds changes meaning: older snapshots of it are then refused. */
export const ARQ_INDEX_VERSION = 2;

const NO_GROUP = {};

/** The ARQ without its profile group, which no invariant reads (the index holds every live ARQ). */
function slim(state: ArqStreamState): ArqStreamState {
  return state.status === "absent" || state.arq.group === NO_GROUP ? state : { ...state, arq: { ...state.arq, group: NO_GROUP } };
}
