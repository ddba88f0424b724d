/**
 * Where `serve` is loaded from: the server's bundle (dist/server-bundle/serve.js, written by `npm
 * run build` after the compiler: the service starts in about half the time node
 * takes to load its modules one by one), or the modules themselves when there is no bundle (under
 * the test runner) or it is older than they are (the compiler ran alone since).
 */
import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";

type ServeModule = typeof import("./serve.command.js");

const BUNDLE = new URL("../../server-bundle/serve.js", import.meta.url);
const MODULE = new URL("./serve.command.js", import.meta.url);

export async function serveModule(): Promise<ServeModule> {
  if (bundleIsCurrent(fileURLToPath(BUNDLE), fileURLToPath(MODULE))) return (await import(BUNDLE.href)) as ServeModule;
  return import("./serve.command.js");
}

/** Whether `bundle` exists and was written after `module`, which it was built from. */
export function bundleIsCurrent(bundle: string, module: string): boolean {
  const built = statSync(bundle, { throwIfNoEntry: false });
  const compiled = statSync(module, { throwIfNoEntry: false });
  return built !== undefined && compiled !== undefined && built.mtimeMs >= compiled.mtimeMs;
}
