/**
 * A fingerprint of the code that builds each read model: the source of its folder under
 * projections/ and of projections/shared (as this build runs it: .ts under the test runner, .js
 * from dist). A read-model snapshot written by other code is refused (memory-snapshots.ts), so an
 * upgrade that changes a model rebuilds it once instead of serving the old layout.
 *
 * The server's bundle (scripts/build.mjs) carries the fingerprints of the dist/projections code it
 * was built from, taken by `projectionLayouts()` when it was built: the same values, tied to the
 * code the bundle runs rather than to the files beside it.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Set in the server's bundle only: each read model's fingerprint, taken when the bundle was built. */
declare const CYBORG_ES_PROJECTION_LAYOUTS: Record<string, string>;
const bundled: Record<string, string> | undefined = typeof CYBORG_ES_PROJECTION_LAYOUTS === "undefined" ? undefined : CYBORG_ES_PROJECTION_LAYOUTS;

/** projections/ at the root of this tree (src/service -> ../../projections; the same from dist/src/service). */
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "projections");

export function projectionLayout(name: string): string {
  if (bundled === undefined) return hashed(name);
  const layout = bundled[name];
  if (layout === undefined) throw new Error(`the server's bundle holds no fingerprint of the ${name} read model's code: run npm run build`);
  return layout;
}

/** Every read model's fingerprint (each folder of projections/ but shared), from the files. */
export function projectionLayouts(): Record<string, string> {
  const names = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== "shared");
  return Object.fromEntries(names.map((d) => [d.name, hashed(d.name)]));
}

function hashed(name: string): string {
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
