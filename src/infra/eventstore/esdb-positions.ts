/**
 * Positions a caller hands the EventStoreDB adapter (GraphQL's `events(after:)`, `auditFeed(after:)`,
 * a checkpoint). On EventStoreDB a position is a byte offset in the server's log: reading from one
 * that is not where an event starts is answered with a server error, so the adapter checks a
 * position it has not seen before it reads from it, and refuses a bad one as the caller's mistake.
 */
import { CancelledError, DeadlineExceededError, NotLeaderError, TimeoutError, UnavailableError } from "@eventstore/db-client";
import { LRUCache } from "lru-cache";
import { DomainError } from "../../domain/shared/types.js";
import type { EsdbClient } from "./esdb-client.js";

/** The server's positions are 64-bit signed integers. */
export const MAX_POSITION = 2n ** 63n - 1n;
/** Positions the adapter has seen events at (read, appended, or checked). */
const KNOWN_POSITIONS = 100_000;

/** The connection, not the request: a retry may succeed. */
export const isTransportError = (err: unknown): boolean =>
  err instanceof UnavailableError || err instanceof DeadlineExceededError || err instanceof CancelledError || err instanceof TimeoutError || err instanceof NotLeaderError;

const badPosition = (after: bigint, why: string) =>
  new DomainError("BAD_USER_INPUT", `after: ${after} ${why}; pass a position this service returned (an event's position, or a page's cursor)`, "after");

export class KnownPositions {
  private readonly seen = new LRUCache<bigint, true>({ max: KNOWN_POSITIONS });

  constructor(private readonly client: Pick<EsdbClient, "readAll">) {}

  add(position: bigint): void {
    this.seen.set(position, true);
  }

  /**
   * Resolves when `after` is undefined, 0 (the start), or the position of an event of the log;
   * otherwise rejects with a BAD_USER_INPUT DomainError. Transport errors reject as they are.
   */
  async check(after: bigint | undefined): Promise<void> {
    if (after === undefined || after === 0n || this.seen.has(after)) return;
    if (after < 0n || after > MAX_POSITION) throw badPosition(after, "is not a position of this log");
    let first: bigint | undefined;
    try {
      for await (const r of this.client.readAll({ fromPosition: { commit: after, prepare: after }, maxCount: 1 })) {
        first = r.event?.position.commit ?? r.commitPosition;
      }
    } catch (err) {
      if (isTransportError(err)) throw err;
      throw badPosition(after, "is not the position of an event in this log");
    }
    if (first !== after) throw badPosition(after, "is not the position of an event in this log");
    this.add(after);
  }
}
