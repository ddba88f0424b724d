/**
 * What the drivers' clean steps share: running the tool, and the digest that identifies what was
 * done (a sha256 over the command line and what the tool answered, and the image a clean loads).
 */
import { createHash } from "node:crypto";
import type { DriverEnv } from "./driver.js";
import { runCommand } from "./host-commands.js";

/** A reset or a reload of a whole device: a few minutes at most before the step is called hung. */
export const CLEAN_TIMEOUT_MS = 10 * 60_000;

/** Runs a clean command (DriverEnv.run, or the host's runCommand) and returns what it printed. */
export function runClean(env: DriverEnv, argv: readonly string[]): Promise<string> {
  return (env.run ?? ((a, o) => runCommand(a, o)))(argv, { timeoutMs: CLEAN_TIMEOUT_MS });
}

/** sha256 over the argv, the tool's answer and any further parts (an image's checksum), hex. */
export function cleanDigest(argv: readonly string[], answer: string, ...more: string[]): string {
  const h = createHash("sha256");
  for (const part of [...argv, "\0", answer, ...more]) h.update(part).update("\0");
  return `sha256:${h.digest("hex")}`;
}

/** The PCI address of a control path, as the tools take it (0000:3b:00.0). */
export const bdfOf = (pci: { domain: string; bus: string; device: string; function: string }) => `${pci.domain}:${pci.bus}:${pci.device}.${pci.function}`;
