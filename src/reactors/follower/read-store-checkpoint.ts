/**
 * A follower's checkpoint in the ReadStore, under its name, written atomically with the handler's
 * writes. It goes when the store loses its data: the follower then starts over from the beginning.
 */
import { CheckpointMismatchError, type ReadStore, type Write } from "../../infra/readstore/port.js";
import { CheckpointMovedError, type FollowerCheckpoint, type StoredCheckpoint } from "./checkpoint.js";

export class ReadStoreCheckpoint implements FollowerCheckpoint {
  readonly where = "read-store";
  private expected: bigint | null = null;

  constructor(
    private readonly store: ReadStore,
    private readonly name: string,
  ) {}

  async load(): Promise<StoredCheckpoint> {
    const position = await this.store.getCheckpoint(this.name);
    this.expected = position ?? null;
    return { position, state: undefined };
  }

  async save(upTo: bigint, kept: { writes: readonly Write[] }): Promise<void> {
    try {
      await this.store.applyBatch(this.name, kept.writes, upTo, this.expected);
    } catch (err) {
      if (err instanceof CheckpointMismatchError) throw new CheckpointMovedError(err.message);
      throw err;
    }
    this.expected = upTo;
  }
}
