/**
 * The bitstream catalogue port: where FPGA bitstreams and their metadata live. Two adapters pass
 * one contract suite (test/bitstreams/contract.ts): the embedded catalogue (metadata as events on
 * the `bitstreams-catalogue` stream, content by SHA-256 in DATA_DIR: app/bitstreams/embedded-catalogue.ts)
 * and Glance (images whose properties carry the metadata: glance.ts).
 */
import type { Readable } from "node:stream";
import type { Bitstream, BitstreamMetadata } from "../../domain/bitstreams/bitstream.js";
import type { CommandContext } from "../../domain/shared/types.js";

export interface BitstreamCatalogue {
  readonly kind: "embedded" | "glance";
  /** A bitstream whose content can be downloaded; null when there is none with this id. */
  get(id: string): Promise<Bitstream | null>;
  list(): Promise<Bitstream[]>;
  /** The bitstreams declaring this function id (exact match); the caller keeps those built for its region. */
  withFunction(functionId: string): Promise<Bitstream[]>;
  /** The bitstreams declaring this function name (exact match: accel:function_name). */
  withFunctionName(functionName: string): Promise<Bitstream[]>;
  /** The bitstreams named `name`, with or without their type suffix (accel:bitstream_name; domain/bitstreams nameMatches). */
  named(name: string): Promise<Bitstream[]>;
  /** Stores the content (refused beyond the catalogue's size limit, or empty) and the metadata. */
  add(ctx: CommandContext, meta: BitstreamMetadata, content: Readable): Promise<Bitstream>;
  /** Removes it, unless `usedBy` says what still uses it (domain/bitstreams/decider.ts checkRemovable). */
  remove(ctx: CommandContext, id: string, usedBy: readonly string[]): Promise<void>;
  /** The content, as stored; null when there is none. Callers check it against `checksum`. */
  open(id: string): Promise<Readable | null>;
}

/** The catalogue could not be reached (Glance down): a bind retries, a request fails without blaming the caller. */
export class CatalogueUnavailableError extends Error {
  override name = "CatalogueUnavailableError";
}
