import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ArchivingStore } from "../../src/infra/eventstore/port.js";

/** Changes one bit of the first archive segment's file, `at` of the way into it. */
export async function damageFirstSegment(archiving: ArchivingStore, dir: string, at = 1 / 2): Promise<void> {
  const [segment] = await archiving.readArchiveSegments();
  const path = join(dir, segment!.file);
  const bytes = readFileSync(path);
  bytes[Math.floor(bytes.length * at)]! ^= 0x01;
  writeFileSync(path, bytes);
}
