/** What the stand-in's reads and subscriptions hand out: Readables in object mode, as the client's are. */
import { Readable } from "node:stream";
import { EVENT_TYPE, type AllStreamResolvedEvent, type Filter, type RecordedEvent } from "@eventstore/db-client";
import type { StoredEvent } from "./log.js";

/** The event as the client's convertGrpcEvent gives it back (JSON parsed again from the text that travelled). */
export function toClientEvent(e: StoredEvent, withPosition: boolean): RecordedEvent {
  return {
    streamId: e.streamId,
    id: e.id,
    revision: e.revision,
    type: e.type,
    data: JSON.parse(e.data) as RecordedEvent["data"],
    metadata: e.metadata === undefined ? undefined : (JSON.parse(e.metadata) as RecordedEvent["metadata"]),
    isJson: true,
    created: e.created,
    ...(withPosition ? { position: { commit: e.position, prepare: e.position } } : {}),
  } as RecordedEvent;
}

export const resolvedFromAll = (e: StoredEvent): AllStreamResolvedEvent =>
  ({ event: toClientEvent(e, true), commitPosition: e.position }) as AllStreamResolvedEvent;

/** A server-side filter: a prefix or a regex (searched, not anchored, as .NET's Regex.IsMatch) on the stream name or the type. */
export function passes(e: StoredEvent, filter: Filter | undefined): boolean {
  if (!filter) return true;
  const value = filter.filterOn === EVENT_TYPE ? e.type : e.streamId;
  if ("prefixes" in filter) return filter.prefixes.some((p) => value.startsWith(p));
  return new RegExp(filter.regex).test(value);
}

/** A finished read: its items, or the error the server answered with. `cancel()` as the client's ReadStream. */
export class StandInRead<E> extends Readable {
  constructor(items: readonly E[] | Error) {
    super({ objectMode: true });
    if (items instanceof Error) queueMicrotask(() => this.destroy(items));
    else {
      for (const item of items) this.push(item);
      this.push(null);
    }
  }

  override _read(): void {}

  async cancel(): Promise<void> {
    this.destroy();
  }
}

/** A catch-up subscription to $all: the log after its start, then every write, until it is unsubscribed or dropped. */
export class StandInSubscription extends Readable {
  id?: string;
  private detach: (() => void) | undefined;

  constructor(start: (deliver: (events: readonly StoredEvent[]) => void) => () => void) {
    super({ objectMode: true });
    queueMicrotask(() => {
      if (this.destroyed) return;
      this.emit("confirmation");
      this.detach = start((events) => {
        for (const e of events) this.push(resolvedFromAll(e));
      });
    });
  }

  override _read(): void {}

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.detach?.();
    callback(err);
  }

  async unsubscribe(): Promise<void> {
    this.detach?.();
    this.detach = undefined;
    if (!this.destroyed) this.push(null);
  }
}
