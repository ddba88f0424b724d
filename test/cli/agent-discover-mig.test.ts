/**
 * `cyborg-es agent discover` on a host with a GPU in MIG mode, as an operator runs it: the
 * --nvidia-smi binary is a script answering from test/fixtures/gpu-mig/, lspci is `cat` of its listing.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { FIXTURES } from "../agent/drivers/fixture-env.js";
import { buildCli, runCli, type BuiltCli } from "../support/cli.js";

vi.setConfig({ testTimeout: 120_000 });

const MIG = `${FIXTURES}gpu-mig`;
const SCRIPT = `#!/bin/sh
case "$*" in
  "-q -x") cat "${MIG}/nvidia-smi-q-x.xml" ;;
  "-L") cat "${MIG}/nvidia-smi-L.txt" ;;
  "mig -i 0 -lgip") cat "${MIG}/mig-lgip.txt" ;;
  "mig -i 0 -lgipp") cat "${MIG}/mig-lgipp.txt" ;;
  "mig -i 0 -lgi") cat "${MIG}/mig-lgi.txt" ;;
  "mig -i 0 -lci") cat "${MIG}/mig-lci.txt" ;;
  *) echo "not answered here: $*" >&2; exit 2 ;;
esac
`;

let built: BuiltCli;
let dir: string;
let nvidiaSmi: string;

beforeAll(async () => {
  built = await buildCli();
  dir = mkdtempSync(join(tmpdir(), "cyborg-es-mig-"));
  nvidiaSmi = join(dir, "nvidia-smi");
  writeFileSync(nvidiaSmi, SCRIPT);
  chmodSync(nvidiaSmi, 0o755);
}, 60_000);

afterAll(async () => {
  await built?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const discover = (...more: string[]) =>
  runCli(built.cli, ["agent", "discover", "--drivers", "nvidia-gpu", "--lspci", `cat ${MIG}/lspci.txt`, "--nvidia-smi", nvidiaSmi, "--sysfs-root", dir, "--kernel-log", "true", ...more], {
    env: { LOG_LEVEL: "silent" },
  });

describe("agent discover with a GPU in MIG mode", () => {
  it("lists the MIG GPU's profiles, with the instances that exist, beside the whole GPU", async () => {
    const r = await discover();
    expect(r.stderr).toBe("");
    const lines = r.stdout.split("\n");
    expect(lines.filter((l) => l.includes("0000:0c:00.0") && !l.startsWith("{"))).toEqual([expect.stringMatching(/_0000:0c:00\.0\s.*\sPGPU\s/)]);
    expect(lines.filter((l) => l.includes("0000:06:00.0") && !l.startsWith("{"))).toHaveLength(7);
    expect(lines.find((l) => l.includes("3g.40gb (made on demand by NVIDIA_MIG)"))).toMatch(/\s2\s+1\s+CUSTOM_MIG_3G_40GB/);
  });

  it("prints the partitioning with --json", async () => {
    const r = await discover("--json");
    // Warnings (no `nvidia-smi topo -m` here) are log lines before the document.
    const lines = r.stdout.split("\n");
    const mig = JSON.parse(lines.slice(lines.indexOf("{")).join("\n")).devices.find((d: { controlPath: { info: { bus: string } } }) => d.controlPath.info.bus === "06");
    expect(mig.deployables).toEqual([]);
    expect(mig.partitioning.partitions.map((p: { uuid: string }) => p.uuid)).toEqual(["MIG-c788539f-c1ea-5a36-8b4d-9b07d024b1bb"]);
  });
});
