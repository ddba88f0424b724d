/**
 * A host with test/fixtures/gpu-mig/: nvidia-smi answers from the fixtures, in the state before a
 * 1g.10gb instance is made or after (`created/`), and every command run is recorded. `answers`
 * replaces what a command (its argv after the binary, joined by spaces) does.
 */
import { readFileSync } from "node:fs";
import type { DriverEnv } from "../../../src/clients/agent/drivers/driver.js";
import { FIXTURES, fixtureEnv, type Warning } from "./fixture-env.js";

const DIR = `${FIXTURES}gpu-mig/`;
const read = (name: string) => readFileSync(`${DIR}${name}`, "utf8");

const LISTINGS: Record<string, string> = {
  "-L": "nvidia-smi-L.txt",
  "mig -i 0 -lgip": "mig-lgip.txt",
  "mig -i 0 -lgipp": "mig-lgipp.txt",
  "mig -i 0 -lgi": "mig-lgi.txt",
  "mig -i 0 -lci": "mig-lci.txt",
};
/** What a made instance changes; the profiles and placements stay as they were. */
const CHANGED = new Set(["nvidia-smi-L.txt", "mig-lgi.txt", "mig-lci.txt", "nvidia-smi-q-x.xml"]);

export interface MigHost {
  env: DriverEnv & { warnings: Warning[] };
  /** Every command run through DriverEnv.run. */
  calls: string[][];
  answers: Record<string, () => string>;
  /** Whether the 1g.10gb instance (GPU instance 7) exists. */
  created: boolean;
}

export function migHost(overrides: Partial<DriverEnv> = {}): MigHost {
  const host: MigHost = { env: undefined as never, calls: [], answers: {}, created: false };
  const file = (name: string) => read(host.created && CHANGED.has(name) ? `created/${name}` : name);
  // An instance made by the recorded -cgi: the listings read after it show it.
  host.answers["mig -i 0 -cgi 19:0 -C"] = () => {
    host.created = true;
    return read("created/mig-cgi.txt");
  };
  host.env = fixtureEnv("gpu-mig", {
    mig: { nvidiaSmiQuery: async () => file("nvidia-smi-q-x.xml") },
    run: async (argv) => {
      host.calls.push([...argv]);
      const key = argv.slice(1).join(" ");
      const answer = host.answers[key];
      if (answer) return answer();
      const listing = LISTINGS[key];
      if (!listing) throw new Error(`${argv.join(" ")} failed (exit 2): not a command this host knows`);
      return file(listing);
    },
    ...overrides,
  });
  return host;
}
