/**
 * A follower's checkpoint in the event log itself: stream `follower-<name>`, one
 * FollowerCheckpointed event per save, appended at the revision last read or written (a refusal
 * means another instance moved it). As durable as the log: it survives a restart of the embedded
 * mode, whose read models live in memory, and a Redis that lost its data.
 */
import { randomUUID } from "node:crypto";
import { positionFromString, WrongExpectedRevisionError, type EventStore, type ExpectedRevision } from "../../infra/eventstore/port.js";
import { CheckpointMovedError, type FollowerCheckpoint, type StoredCheckpoint } from "./checkpoint.js";

export const FOLLOWER_CHECKPOINTED = "FollowerCheckpointed";

export interface FollowerCheckpointed {
  type: typeof FOLLOWER_CHECKPOINTED;
  /** position: a decimal string (log positions are bigints); state: the handler's, as JSON. */
  data: { position: string; state?: unknown; at: string };
}

export const followerStream = (name: string) => `follower-${name}`;

export class EventLogCheckpoint implements FollowerCheckpoint {
  readonly where = "event-log";
  private readonly stream: string;
  private expected: ExpectedRevision = "no_stream";

  constructor(
    private readonly events: EventStore,
    private readonly name: string,
  ) {
    this.stream = followerStream(name);
  }

  async load(): Promise<StoredCheckpoint> {
    const [last] = await this.events.readStream(this.stream, { direction: "backwards", maxCount: 1 });
    this.expected = last ? last.revision : "no_stream";
    if (!last) return { position: undefined, state: undefined };
    const data = last.data as FollowerCheckpointed["data"];
    return { position: positionFromString(data.position), state: data.state };
  }

  async save(upTo: bigint, kept: { state: unknown }): Promise<void> {
    const at = new Date().toISOString();
    const id = randomUUID();
    const data: FollowerCheckpointed["data"] = { position: upTo.toString(), ...(kept.state === undefined ? {} : { state: kept.state }), at };
    const metadata = { principal: `system:${this.name}`, correlationId: id, causationId: id, at };
    try {
      const { revision } = await this.events.append(this.stream, [{ id, type: FOLLOWER_CHECKPOINTED, data, metadata }], this.expected);
      this.expected = revision;
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) throw new CheckpointMovedError(`${this.stream}: ${err.message}`);
      throw err;
    }
  }
}
