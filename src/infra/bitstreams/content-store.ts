/**
 * Bitstream content on local disk, stored by SHA-256 (`<dir>/<hex>`): written to a temporary file
 * while hashed, then renamed into place, so a file under its name always holds what the name says.
 * Two uploads of the same content share one file.
 */
import { createHash, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DomainError } from "../../domain/shared/types.js";

export class ContentStore {
  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {}

  /** Hashes and stores the content; BAD_USER_INPUT when it is empty or over the limit. */
  async put(content: Readable): Promise<{ sha256: string; size: number }> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `.upload-${randomUUID()}`);
    const hash = createHash("sha256");
    let size = 0;
    const max = this.maxBytes;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > max) return done(new DomainError("BAD_USER_INPUT", `the bitstream is larger than ${max} bytes (BITSTREAM_MAX_BYTES)`, "content"));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(content, meter, createWriteStream(tmp));
      if (size === 0) throw new DomainError("BAD_USER_INPUT", "the bitstream is empty", "content");
      const sha256 = hash.digest("hex");
      await rename(tmp, this.path(sha256));
      return { sha256, size };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /** The content, opened now (a file removed later still reads whole); null when there is none. */
  async open(sha256: string): Promise<Readable | null> {
    try {
      return (await open(this.path(sha256), "r")).createReadStream();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async remove(sha256: string): Promise<void> {
    await rm(this.path(sha256), { force: true });
  }

  private path(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return join(this.dir, sha256);
  }
}
