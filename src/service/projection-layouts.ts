/**
 * A fingerprint of the code that builds each read model: the source of its folder under
 * projections/ and of projections/shared (as this build runs it: .ts under the test runner, .js
 * from dist). A read-model snapshot written by other code is refused (memory-snapshots.ts), so an
 * upgrade that changes a model rebuilds it once instead of serving the old layout.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** projections/ at the root of this tree (src/service -> ../../projections; the same from dist/src/service). */
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "projections");

export function projectionLayout(name: string): string {
  const hash = createHash("sha256");
  for (const folder of [name, "shared"]) {
    const dir = join(root, folder);
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith(".d.ts")).sort()) {
      hash.update(`${folder}/${file}\0`).update(readFileSync(join(dir, file))).update("\0");
    }
  }
  return hash.digest("hex").slice(0, 16);
}
