/**
 * Where `serve` is loaded from: the server's bundle (dist/server-bundle/serve.js, written by `npm
 * run build` after the compiler: the service starts in about half the time node
 * takes to load its modules one by one), or the modules themselves when there is no bundle (under
 * the test runner) or it is older than they are (the compiler ran alone since), or when
 * `SERVE_BUNDLE=false` asks for them (a CPU profile names the modules' files, which the bench's
 * split of a flow's CPU by stage reads).
 */
import { statSync } from "node:fs";
import { fileURLToPath } from "node:url";

type ServeModule = typeof import("./serve.command.js");

const BUNDLE = new URL("../../server-bundle/serve.js", import.meta.url);
const MODULE = new URL("./serve.command.js", import.meta.url);

export async function serveModule(env: NodeJS.ProcessEnv = process.env): Promise<ServeModule> {
  if (bundleWanted(env) && bundleIsCurrent(fileURLToPath(BUNDLE), fileURLToPath(MODULE))) return (await import(BUNDLE.href)) as ServeModule;
  return import("./serve.command.js");
}

/** `SERVE_BUNDLE`: unset or `true` runs the bundle when it is current, `false` the modules; anything else is refused. */
export function bundleWanted(env: NodeJS.ProcessEnv): boolean {
  const v = env.SERVE_BUNDLE;
  if (v === undefined || v === "" || v === "true") return true;
  if (v === "false") return false;
  throw new Error(`SERVE_BUNDLE must be true or false, not ${JSON.stringify(v.slice(0, 40))}`);
}

/** Whether `bundle` exists and was written after `module`, which it was built from. */
export function bundleIsCurrent(bundle: string, module: string): boolean {
  const built = statSync(bundle, { throwIfNoEntry: false });
  const compiled = statSync(module, { throwIfNoEntry: false });
  return built !== undefined && compiled !== undefined && built.mtimeMs >= compiled.mtimeMs;
}
