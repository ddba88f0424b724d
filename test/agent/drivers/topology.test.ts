/**
 * Device topology as the agent reads it: NUMA node and PCIe ports from a sysfs tree of symlinks
 * (test/fixtures/gpu-topology/sys), NVLink domains from real `nvidia-smi topo -m` matrices.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { linkDomains, parseTopoMatrix } from "../../../src/clients/agent/drivers/nvidia-topo.js";
import { nvidiaGpuDriver } from "../../../src/clients/agent/drivers/nvidia-gpu.js";
import { pcieAncestry, parseNumaNode, readPciTopology, withSysfsTopology } from "../../../src/clients/agent/drivers/topology.js";
import { FIXTURES, fixtureEnv, pci } from "./fixture-env.js";

const SYS = `${FIXTURES}gpu-topology/sys`;
const matrix = (name: string) => readFile(`${FIXTURES}gpu-topology/${name}`, "utf8");
const EIGHT = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"];
const device = (bdf: string, topology?: DriverDevice["topology"]): DriverDevice => ({
  type: "GPU",
  vendor: "10de",
  model: "m",
  controlPath: { type: "PCI", info: pci(bdf) },
  deployables: [],
  ...(topology ? { topology } : {}),
});

describe("PCIe ports from a device's sysfs path", () => {
  it("names the root port, and the switch's upstream port above the downstream port the device hangs off", () => {
    expect(pcieAncestry("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0".split("/"))).toEqual({ pcieRoot: "0000:00:01.0", pcieSwitch: "0000:01:00.0" });
    // Two switches cascaded: the nearest one counts.
    expect(pcieAncestry("/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0/0000:84:10.0/0000:85:00.0".split("/"))).toMatchObject({ pcieSwitch: "0000:83:00.0" });
    expect(pcieAncestry("/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.0".split("/"))).toEqual({ pcieRoot: "0000:00:03.0", pcieSwitch: null });
    expect(pcieAncestry("/sys/devices/pci0000:00/0000:00:14.0".split("/"))).toEqual({ pcieRoot: null, pcieSwitch: null });
    expect(pcieAncestry(["sys", "devices", "platform"])).toBeNull();
  });

  it("reads numa_node, -1 as no NUMA", () => {
    expect([parseNumaNode("1"), parseNumaNode("-1"), parseNumaNode(null), parseNumaNode("x")]).toEqual([1, null, null, null]);
  });

  it("follows the bus/pci/devices symlink of a fixture tree", async () => {
    expect(await readPciTopology(SYS, "0000:03:00.0")).toEqual({ numaNode: 1, pcieRoot: "0000:00:01.0", pcieSwitch: "0000:01:00.0" });
    expect(await readPciTopology(SYS, "0000:05:00.0")).toEqual({ numaNode: 0, pcieRoot: "0000:00:03.0", pcieSwitch: null });
    expect(await readPciTopology(SYS, "0000:99:00.0")).toBeNull();
  });

  it("gives each reported device its topology, keeps a driver's link domain, and leaves out what shows nothing", async () => {
    const env = fixtureEnv("gpu-topology");
    const [switched, direct, integrated, absent] = await withSysfsTopology(env, [
      device("0000:03:00.0", { numaNode: null, pcieRoot: null, pcieSwitch: null, linkDomain: "nvlink:0000:03:00.0" }),
      device("0000:05:00.0"),
      device("0000:00:14.0"),
      device("0000:99:00.0"),
    ]);
    expect(switched!.topology).toEqual({ numaNode: 1, pcieRoot: "0000:00:01.0", pcieSwitch: "0000:01:00.0", linkDomain: "nvlink:0000:03:00.0" });
    expect(direct!.topology).toEqual({ numaNode: 0, pcieRoot: "0000:00:03.0", pcieSwitch: null, linkDomain: null });
    expect(integrated!.topology).toBeUndefined();
    expect(absent!.topology).toBeUndefined();
  });
});

describe("NVLink domains from nvidia-smi topo -m", () => {
  it("puts the eight NVSwitch-connected GPUs of a DGX H100 in one domain named after the lowest address", async () => {
    const text = await matrix("nvidia-smi-topo-dgx-h100.txt");
    expect(parseTopoMatrix(text)).toMatchObject({ gpus: 8 });
    const domains = linkDomains(text, [...EIGHT].reverse())!;
    expect([...domains.keys()]).toEqual(EIGHT);
    expect(new Set(domains.values())).toEqual(new Set(["nvlink:0000:18:00.0"]));
  });

  it("gives the GPUs of a PCIe-only box no link domain, NIC columns and affinity columns notwithstanding", async () => {
    const text = await matrix("nvidia-smi-topo-pcie-4090.txt");
    expect(parseTopoMatrix(text)).toEqual({ gpus: 8, links: [] });
    expect(linkDomains(text, EIGHT)!.size).toBe(0);
  });

  it("splits GPUs joined only in pairs into one domain per pair", () => {
    const pairs = ["\tGPU0\tGPU1\tGPU2\tGPU3", "GPU0\t X \tNV4\tSYS\tSYS", "GPU1\tNV4\t X \tSYS\tSYS", "GPU2\tSYS\tSYS\t X \tNV4", "GPU3\tSYS\tSYS\tNV4\t X "].join("\n");
    const domains = linkDomains(pairs, EIGHT.slice(0, 4))!;
    expect([...domains.values()]).toEqual(["nvlink:0000:18:00.0", "nvlink:0000:18:00.0", "nvlink:0000:3a:00.0", "nvlink:0000:3a:00.0"]);
  });

  it("guesses nothing when the matrix does not list the GPUs the driver found", async () => {
    const env = fixtureEnv("mixed-host", { topology: { nvidiaSmiTopo: () => matrix("nvidia-smi-topo-dgx-h100.txt") } });
    const gpus = await nvidiaGpuDriver.discover(env);
    expect(gpus.length).toBe(5);
    expect(gpus.every((g) => g.topology === undefined)).toBe(true);
    expect(env.warnings.map((w) => w.msg)).toEqual(["nvidia-smi topo -m does not list the GPUs found; GPUs reported without link domains"]);
  });
});
