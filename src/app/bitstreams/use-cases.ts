/** Bitstream catalogue use cases: upload, remove (refused while in use), list, and content for a host's agent. */
import type { Readable } from "node:stream";
import { validateBitstreamMetadata, type Bitstream, type BitstreamMetadata } from "../../domain/bitstreams/bitstream.js";
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import type { BitstreamCatalogue } from "../../infra/bitstreams/port.js";
import { programmingInFlight } from "../programming.js";
import type { Streams } from "../streams.js";

export function uploadBitstream(
  catalogue: BitstreamCatalogue,
  ctx: CommandContext,
  input: Partial<Record<keyof BitstreamMetadata, unknown>>,
  content: Readable,
): Promise<Bitstream> {
  return catalogue.add(ctx, validateBitstreamMetadata(input), content);
}

/** `usedBy`: what still uses it (regions running it or being programmed with it, profiles naming it). */
export async function deleteBitstream(catalogue: BitstreamCatalogue, ctx: CommandContext, id: string, usedBy: readonly string[]): Promise<void> {
  await catalogue.remove(ctx, id, usedBy);
}

/**
 * The content, for an admin, or for the agent of a host with a request in flight naming it (an
 * agent downloads only what it was asked to program). The caller checks it against the checksum.
 */
export async function bitstreamContent(
  s: Streams,
  catalogue: BitstreamCatalogue,
  id: string,
  forHost: string | null,
): Promise<{ bitstream: Bitstream; content: Readable }> {
  if (forHost !== null && !(await programmingInFlight(s, forHost)).some((r) => r.bitstream.id === id)) {
    throw new DomainError("FORBIDDEN", `no programming request on host ${forHost} names bitstream ${id}`, "id");
  }
  const bitstream = await catalogue.get(id);
  const content = bitstream && (await catalogue.open(id));
  if (!bitstream || !content) throw new DomainError("NOT_FOUND", `bitstream ${id} not found`, "id");
  return { bitstream, content };
}
