/**
 * What each simulated host reports: the devices the agent's own drivers discover on the mixed-host
 * fixture (test/fixtures/mixed-host: GPUs, FPGAs, a QAT card, a NIC, and Cyborg's fake FPGA), eight
 * of them, renamed for the host; and the churn a fleet sees between two reports.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { discoverAll } from "../../../src/clients/agent/drivers/index.js";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";

const TEMPLATE_HOST = "fleettemplatehost";
/** How many devices of each type a host has (8 in all); the first FPGA is the fake one the boot storm binds. */
const QUOTA: Record<string, number> = { FPGA: 3, GPU: 3, QAT: 1, NIC: 1 };

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) || !existsSync(join(dir, "test", "fixtures"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find the repository root (with test/fixtures) above the benchmark");
    dir = up;
  }
  return dir;
}

/** The eight devices of one host as the drivers report them, with a placeholder hostname. */
export async function templateDevices(): Promise<string> {
  const fixture = join(repoRoot(), "test", "fixtures", "mixed-host");
  const env = {
    hostname: TEMPLATE_HOST,
    sysfsRoot: join(fixture, "sys"),
    lspci: () => readFile(join(fixture, "lspci.txt"), "utf8"),
    config: { nvidia: { enabledVgpuTypes: ["nvidia-223", "nvidia-472"] }, pci: { whitelist: [{ vendorId: "15b3" }] } },
  };
  const warn = (fields: Record<string, unknown>, msg: string) => process.stderr.write(`driver warning: ${msg} ${JSON.stringify(fields)}\n`);
  const { devices, errors } = await discoverAll(["fake", "nvidia-gpu", "intel-fpga", "xilinx-fpga", "intel-qat", "pci"], env, { warn });
  if (errors.length) throw new Error(`the drivers failed on the fixture: ${JSON.stringify(errors)}`);
  const left = { ...QUOTA };
  const picked = devices.filter((d) => (left[d.type] ?? 0) > 0 && left[d.type]!-- > 0);
  if (picked[0]?.deployables[0]?.name !== `${TEMPLATE_HOST}_FakeDevice`) throw new Error("the fake FPGA must come first");
  return JSON.stringify(picked);
}

/** The template's devices for `hostname` (deployable names carry the hostname, as the drivers write them). */
export function devicesFor(template: string, hostname: string): DriverDevice[] {
  return JSON.parse(template.split(TEMPLATE_HOST).join(hostname)) as DriverDevice[];
}

/** The resource provider of the host's fake FPGA, which the boot storm binds (never churned). */
export const stormRpUuid = (hostname: string) => rpUuidFor(`${hostname}_FakeDevice`);

export type ChurnKind = "removed" | "added" | "unhealthy" | "recovered";

/**
 * One simulated host: its full device list, and which of its devices are out of its report. The
 * fake FPGA (index 0) stays, so the boot storm always finds its target.
 */
export class SimulatedHost {
  private readonly out = new Map<number, "removed" | "unhealthy">();

  constructor(
    readonly hostname: string,
    readonly token: string,
    private readonly all: DriverDevice[],
  ) {}

  /** What the agent reports now. */
  report(): DriverDevice[] {
    const reported: DriverDevice[] = [];
    for (const [i, device] of this.all.entries()) {
      const state = this.out.get(i);
      const sent = state === undefined ? device : state === "unhealthy" ? asUnhealthy(device) : null;
      if (sent) reported.push(sent);
    }
    return reported;
  }

  /** One change between two reports: a device pulled or put back, or going unhealthy or recovering. */
  churn(random: () => number): ChurnKind {
    const absent = [...this.out.keys()];
    if (absent.length > 0 && random() < 0.5) {
      const i = absent[Math.floor(random() * absent.length)]!;
      const was = this.out.get(i)!;
      this.out.delete(i);
      return was === "removed" ? "added" : "recovered";
    }
    const present = this.all.map((_, i) => i).filter((i) => i > 0 && !this.out.has(i));
    if (present.length === 0) return "added";
    const i = present[Math.floor(random() * present.length)]!;
    const kind = random() < 0.5 ? "removed" : "unhealthy";
    this.out.set(i, kind);
    return kind;
  }
}

/**
 * The hook for device health: until agents report a device's health, an unhealthy device is one
 * that drops out of the report (null), and comes back when it recovers. Once the report carries
 * health, return the device here with its health set: it then stays in the report.
 */
function asUnhealthy(_device: DriverDevice): DriverDevice | null {
  return null;
}
