/**
 * The command line as a user runs it (`cyborg-es ...`), for tests that spawn it with their own
 * argv: the build of test/support/cli.ts (src/ and projections/ transpiled with SWC into a
 * temporary directory whose node_modules links to ours), as `node <cli>`.
 */
import { buildCli as build } from "./cli.js";

export interface BuiltCli {
  /** argv[0..1] of `cyborg-es`: node and the transpiled src/cli/index.js. */
  argv: string[];
  remove(): Promise<void>;
}

export async function buildCli(): Promise<BuiltCli> {
  const built = await build();
  return { argv: [process.execPath, built.cli], remove: built.remove };
}
