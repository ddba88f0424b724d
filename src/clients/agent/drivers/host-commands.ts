/**
 * The real host commands behind DriverEnv: `lspci -nnn -D` and `lspci -k -s <bdf>` (pciutils).
 * Commands run without a shell; lspci reads sysfs and needs no root for these listings.
 */
import { execFile } from "node:child_process";
import { basename } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_SYSFS_ROOT, type DriverConfig, type DriverEnv, type DriverLog } from "./driver.js";
import { isBdf } from "./naming.js";
import { FPGAINFO } from "./opae.js";

const exec = promisify(execFile);

export const LSPCI_COMMAND = "lspci -nnn -D";

export interface HostCommandOptions {
  timeoutMs?: number;
}

/** Runs argv[0] with the rest as arguments and returns stdout; errors say what to install or fix. */
export async function runCommand(argv: readonly string[], opts: HostCommandOptions = {}): Promise<string> {
  const [bin, ...args] = argv;
  if (!bin) throw new Error("empty command");
  const shown = argv.join(" ");
  try {
    const { stdout } = await exec(bin, args, {
      timeout: opts.timeoutMs ?? 30_000,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, LC_ALL: "C" },
    });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; killed?: boolean; code?: string | number };
    if (e.code === "ENOENT") {
      const hint = basename(bin) === "lspci" ? ": install pciutils (apt-get install pciutils / dnf install pciutils)" : "";
      throw new Error(`${bin} not found${hint}`);
    }
    if (e.killed) throw new Error(`${shown} timed out`);
    // Some tools (nvidia-smi) say why on stdout: that is the message when stderr is empty.
    const said = (e.stderr?.trim() || (e as { stdout?: string }).stdout?.trim() || e.message).trim();
    throw new Error(`${shown} failed (exit ${String(e.code)}): ${said}`);
  }
}

/** DriverEnv.lspci running `command` (default "lspci -nnn -D"; split on spaces, no shell). */
export function lspciRunner(command: string = LSPCI_COMMAND, opts: HostCommandOptions = {}): () => Promise<string> {
  const argv = command.trim().split(/\s+/).filter(Boolean);
  return () => runCommand(argv, opts);
}

/** DriverEnv.lspciK: `lspci -k -s <bdf>`. */
export function lspciKRunner(lspciBin = "lspci", opts: HostCommandOptions = {}): (bdf: string) => Promise<string> {
  return async (bdf) => {
    if (!isBdf(bdf)) throw new Error(`not a PCI address: ${JSON.stringify(bdf)}`);
    return runCommand([lspciBin, "-k", "-s", bdf], opts);
  };
}

/** Program commands take long (a full-device load: minutes); 10 minutes before one is called hung. */
export const PROGRAM_TIMEOUT_MS = 10 * 60_000;

/** Runs a driver's program command: DriverEnv.run, or the host's runCommand. */
export function runProgram(env: DriverEnv, argv: readonly string[]): Promise<string> {
  return (env.run ?? ((a, o) => runCommand(a, o)))(argv, { timeoutMs: PROGRAM_TIMEOUT_MS });
}

/**
 * `nvidia-smi -q -x`, with what it wrote to stderr: a GPU it cannot reach is named there
 * ("Unable to determine the device handle for GPU..."), and it may then exit non-zero while the
 * others are still described. Only a missing binary or a hang is an error.
 */
export function nvidiaSmiRunner(bin = "nvidia-smi", opts: HostCommandOptions = {}): () => Promise<string> {
  return async () => {
    try {
      const { stdout, stderr } = await exec(bin, ["-q", "-x"], { timeout: opts.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, LC_ALL: "C" } });
      return `${stdout}\n${stderr}`;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string; killed?: boolean };
      if (e.code === "ENOENT") throw new Error(`${bin} not found: install the NVIDIA driver's utilities`);
      if (e.killed) throw new Error(`${bin} -q -x timed out`);
      if (!e.stdout && !e.stderr) throw new Error(`${bin} -q -x failed: ${e.message}`);
      return `${e.stdout ?? ""}\n${e.stderr ?? ""}`;
    }
  };
}

/** `nvidia-smi topo -m`: the GPUs' link matrix (nvidia-topo.ts). */
export function nvidiaSmiTopoRunner(bin = "nvidia-smi", opts: HostCommandOptions = {}): () => Promise<string> {
  return () => runCommand([bin, "topo", "-m"], { timeoutMs: opts.timeoutMs ?? 30_000 });
}

/** The kernel log (`dmesg`), for NVIDIA's XID lines; reading it needs CAP_SYSLOG where kernel.dmesg_restrict is 1. */
export function kernelLogRunner(command = "dmesg", opts: HostCommandOptions = {}): () => Promise<string> {
  const argv = command.trim().split(/\s+/).filter(Boolean);
  return () => runCommand(argv, opts);
}

/**
 * OPAE's `fpgainfo errors all` (health/fpgainfo.ts). A host without OPAE's tools answers null: its
 * FPGAs' health is then what the other sources say, nothing invented for the tool's absence.
 */
export function fpgainfoErrorsRunner(bin = FPGAINFO, opts: HostCommandOptions = {}): () => Promise<string | null> {
  return async () => {
    try {
      return await runCommand([bin, "errors", "all"], opts);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith(`${bin} not found`)) return null;
      throw err;
    }
  };
}

/** A DriverEnv on the real host. */
export function hostDriverEnv(args: { hostname: string; config: DriverConfig; sysfsRoot?: string; log?: DriverLog }): DriverEnv {
  return {
    hostname: args.hostname,
    sysfsRoot: args.sysfsRoot ?? DEFAULT_SYSFS_ROOT,
    lspci: lspciRunner(),
    lspciK: lspciKRunner(),
    config: args.config,
    health: { nvidiaSmi: nvidiaSmiRunner(), kernelLog: kernelLogRunner(), fpgainfoErrors: fpgainfoErrorsRunner() },
    topology: { nvidiaSmiTopo: nvidiaSmiTopoRunner() },
    mig: { nvidiaSmiQuery: nvidiaSmiRunner() },
    ...(args.log ? { log: args.log } : {}),
  };
}
