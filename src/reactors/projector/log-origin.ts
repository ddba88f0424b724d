/**
 * Which log a read model was built from (ReadStore `Origin`): the log's identity is the id of its
 * first event (as the audit index on disk keeps it, disk-index.ts), and each checkpoint carries the
 * id of the event at that position. A store that outlives the process (Redis, LMDB) may meet a
 * fresh log, one restored from an older copy, or another deployment's: its models are then not
 * this log's, and must not be served.
 */
import type { EventStore, RecordedEvent } from "../../infra/eventstore/port.js";
import type { Origin, Stamp } from "../../infra/readstore/port.js";

export class LogOrigin {
  private first: string | undefined;

  constructor(private readonly events: EventStore) {}

  /** The id of the log's first event (read once; undefined while the log is empty). */
  async identity(): Promise<string | undefined> {
    if (this.first === undefined) this.first = (await this.events.readAll({ maxCount: 1 }))[0]?.id;
    return this.first;
  }

  /** The origin of a checkpoint at `event` (an event of this log, so the log has a first one). */
  async of(event: Pick<RecordedEvent, "id">): Promise<Origin> {
    return { log: this.first ?? (await this.identity()) ?? event.id, event: event.id };
  }

  /**
   * Why models stamped so are not this log's, one answer per stamp (undefined: this log's, or
   * written without an origin and not past the head, which cannot be told apart). `head` is the
   * log's head now.
   */
  async foreign(stamps: ReadonlyArray<Stamp | undefined>, head: bigint | undefined): Promise<Array<string | undefined>> {
    const events = new Map<bigint, Promise<string | undefined>>();
    const eventAt = (p: bigint) => {
      let id = events.get(p);
      if (!id) events.set(p, (id = this.events.readAll({ after: p - 1n, maxCount: 1 }).then(([e]) => (e?.position === p ? e.id : undefined))));
      return id;
    };
    return Promise.all(stamps.map((s) => (s === undefined ? undefined : this.why(s, head, eventAt))));
  }

  private async why(stamp: Stamp, head: bigint | undefined, eventAt: (p: bigint) => Promise<string | undefined>): Promise<string | undefined> {
    const cp = stamp.checkpoint;
    if (head === undefined) return `its checkpoint is ${cp} and this log is empty`;
    if (cp > head) return `its checkpoint ${cp} is ahead of this log's head ${head}`;
    if (stamp.origin === undefined) return undefined;
    const first = await this.identity();
    if (stamp.origin.log !== first) return `it was built from the log whose first event is ${stamp.origin.log}; this log's first event is ${first}`;
    const at = await eventAt(cp);
    if (at !== stamp.origin.event) return `this log's event at ${cp} is ${at ?? "none"}, not ${stamp.origin.event} (a log restored from an older copy, or replaced)`;
    return undefined;
  }
}
