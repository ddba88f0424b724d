/**
 * The embedded bitstream catalogue: metadata as events on the `bitstreams-catalogue` stream (decided by
 * domain/bitstreams/decider.ts), content by SHA-256 in DATA_DIR/bitstreams. Reads fold the stream
 * through the aggregate cache, so a lookup costs a read of the events since the last one.
 * With several API processes, each keeps content in its own DATA_DIR: use Glance there.
 */
import type { Readable } from "node:stream";
import { nameMatches, type Bitstream, type BitstreamMetadata } from "../../domain/bitstreams/bitstream.js";
import type { CommandContext } from "../../domain/shared/types.js";
import type { ContentStore } from "../../infra/bitstreams/content-store.js";
import type { BitstreamCatalogue } from "../../infra/bitstreams/port.js";
import { aggregates, type Streams } from "../streams.js";

export class EmbeddedCatalogue implements BitstreamCatalogue {
  readonly kind = "embedded" as const;

  constructor(
    private readonly streams: Streams,
    private readonly content: ContentStore,
    private readonly newId: () => string,
  ) {}

  /** The same catalogue, written through other streams with other ids (a command under an idempotency key). */
  keyed(streams: Streams, newId: () => string): EmbeddedCatalogue {
    return new EmbeddedCatalogue(streams, this.content, newId);
  }

  async get(id: string): Promise<Bitstream | null> {
    return (await this.state()).bitstreams.get(id) ?? null;
  }

  async list(): Promise<Bitstream[]> {
    return [...(await this.state()).bitstreams.values()];
  }

  async withFunction(functionId: string): Promise<Bitstream[]> {
    return (await this.list()).filter((b) => b.functionId === functionId);
  }

  async withFunctionName(functionName: string): Promise<Bitstream[]> {
    return (await this.list()).filter((b) => b.functionName === functionName);
  }

  async named(name: string): Promise<Bitstream[]> {
    return (await this.list()).filter((b) => nameMatches(b.name, name));
  }

  async add(ctx: CommandContext, meta: BitstreamMetadata, content: Readable): Promise<Bitstream> {
    const { sha256, size } = await this.content.put(content);
    const bitstream: Bitstream = { id: this.newId(), ...meta, checksum: `sha256:${sha256}`, size, createdAt: ctx.at };
    try {
      await this.streams.handle(aggregates.catalogue, "", { type: "AddBitstream", data: bitstream }, ctx);
    } catch (err) {
      await this.dropContentIfUnused(bitstream.checksum);
      throw err;
    }
    return bitstream;
  }

  async remove(ctx: CommandContext, id: string, usedBy: readonly string[]): Promise<void> {
    const r = await this.streams.handle(aggregates.catalogue, "", { type: "RemoveBitstream", data: { id, usedBy, at: ctx.at } }, ctx);
    const removed = r.events[0];
    if (removed?.type === "BitstreamRemoved") await this.dropContentIfUnused(removed.data.checksum);
  }

  async open(id: string): Promise<Readable | null> {
    const b = await this.get(id);
    return b ? this.content.open(b.checksum.slice("sha256:".length)) : null;
  }

  private async state() {
    return (await this.streams.load(aggregates.catalogue, "")).state;
  }

  /** Content is shared by bitstreams with the same bytes: drop the file when none is left. */
  private async dropContentIfUnused(checksum: string): Promise<void> {
    if ((await this.list()).some((b) => b.checksum === checksum)) return;
    await this.content.remove(checksum.slice("sha256:".length));
  }
}
