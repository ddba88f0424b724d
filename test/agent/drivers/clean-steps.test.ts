/**
 * The drivers' clean steps, on the devices the mixed-host fixture's discovery reports: the command
 * line each runs, what the tools answer (their real wording), and failures carrying the tool's message.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CleanTarget, Driver, DriverEnv } from "../../../src/clients/agent/drivers/driver.js";
import { cleanDigest } from "../../../src/clients/agent/drivers/clean-step.js";
import { FAKE_CLEAN, fakeDriver } from "../../../src/clients/agent/drivers/fake.js";
import { FPGACONF, intelFpgaDriver } from "../../../src/clients/agent/drivers/intel-fpga.js";
import { intelQatDriver } from "../../../src/clients/agent/drivers/intel-qat.js";
import { nvidiaGpuDriver } from "../../../src/clients/agent/drivers/nvidia-gpu.js";
import { XBUTIL } from "../../../src/clients/agent/drivers/xilinx-fpga-clean.js";
import { xilinxFpgaDriver } from "../../../src/clients/agent/drivers/xilinx-fpga.js";
import { cleanerFor } from "../../../src/clients/agent/clean-handler.js";
import { drivers } from "../../../src/clients/agent/drivers/index.js";
import { fixtureEnv } from "./fixture-env.js";

const tmp = mkdtempSync(join(tmpdir(), "cyborg-es-clean-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The first device the driver finds on the mixed host, as a clean target. */
async function target(driver: Driver, bus?: string): Promise<CleanTarget> {
  const devices = (await driver.discover(fixtureEnv("mixed-host"))).filter((d) => !d.stub && (!bus || d.controlPath.info.bus === bus));
  const d = devices[0]!;
  return { controlPath: d.controlPath.info as CleanTarget["controlPath"], deviceType: d.type, driverNames: [...new Set(d.deployables.map((x) => x.driverName).filter((n): n is string => !!n))] };
}

/** A DriverEnv whose commands are recorded and answered with `answer` (or fail with `fail`). */
function answering(answer: string, fail?: string, config: DriverEnv["config"] = {}) {
  const ran: string[][] = [];
  const env: DriverEnv = {
    ...fixtureEnv("mixed-host"),
    config,
    run: async (argv) => {
      ran.push([...argv]);
      if (fail) throw new Error(fail);
      return answer;
    },
  };
  return { env, ran };
}

describe("nvidia-gpu: nvidia-smi --gpu-reset", () => {
  it("resets the GPU at its BDF; the digest covers the command and nvidia-smi's answer", async () => {
    const t = await target(nvidiaGpuDriver, "3b");
    const answer = "GPU 00000000:3B:00.0 was successfully reset.\nAll done.\n";
    const { env, ran } = answering(answer);
    const r = await nvidiaGpuDriver.cleaner!.clean(env, t);
    expect(r.command).toEqual(["nvidia-smi", "--gpu-reset", "-i", "0000:3b:00.0"]);
    expect(ran).toEqual([r.command]);
    expect(r.digest).toBe(cleanDigest(r.command, answer));
    expect(r.digest).not.toBe(cleanDigest(r.command, "GPU 00000000:86:00.0 was successfully reset.\n"));
  });
  it("a GPU still in use: the reset fails with nvidia-smi's words", async () => {
    const t = await target(nvidiaGpuDriver, "3b");
    const said =
      "nvidia-smi --gpu-reset -i 0000:3b:00.0 failed (exit 255): The following GPUs could not be reset:\n  GPU 00000000:3B:00.0: In use by another client\n\n" +
      "1 device is currently being used by one or more other processes (e.g. Fabric Manager, CUDA application, graphics application such as an X server, or a monitoring application such as another instance of nvidia-smi).";
    const { env } = answering("", said);
    await expect(nvidiaGpuDriver.cleaner!.clean(env, t)).rejects.toThrow(/In use by another client/);
  });
  it("an answer that does not say the GPU was reset is not a clean", async () => {
    const { env } = answering("Unable to reset this GPU because it's being used by some other process\n");
    await expect(nvidiaGpuDriver.cleaner!.clean(env, await target(nvidiaGpuDriver, "3b"))).rejects.toThrow(/did not say the GPU was reset: Unable to reset/);
  });
  it("runs the nvidia-smi the agent was given", async () => {
    const { env, ran } = answering("GPU 00000000:86:00.0 was successfully reset.\n", undefined, { nvidia: { nvidiaSmi: "/usr/local/bin/nvidia-smi" } });
    await nvidiaGpuDriver.cleaner!.clean(env, await target(nvidiaGpuDriver, "86"));
    expect(ran).toEqual([["/usr/local/bin/nvidia-smi", "--gpu-reset", "-i", "0000:86:00.0"]]);
  });
});

describe("xilinx-fpga: xbutil reset at the card's user function", () => {
  it("resets the U250 by its user PF (d8:00.1), forced", async () => {
    const t = await target(xilinxFpgaDriver);
    expect(t.controlPath).toMatchObject({ bus: "d8", device: "00", function: "0" });
    const answer = "Performing 'HOT Reset' on '0000:d8:00.1'\nSuccessfully reset Device[0000:d8:00.1]\n";
    const { env, ran } = answering(answer);
    const r = await xilinxFpgaDriver.cleaner!.clean(env, t);
    expect(ran).toEqual([[XBUTIL, "reset", "--device", "0000:d8:00.1", "--force"]]);
    expect(r.digest).toBe(cleanDigest(r.command, answer));
  });
  it("xbutil's 'Reset failed' (it exits 0) is a failure, with its words", async () => {
    const { env } = answering("Performing 'HOT Reset' on '0000:d8:00.1'\nReset failed on Device[0000:d8:00.1]\n");
    await expect(xilinxFpgaDriver.cleaner!.clean(env, await target(xilinxFpgaDriver))).rejects.toThrow(/did not reset the card: .*Reset failed on Device\[0000:d8:00.1\]/s);
  });
});

describe("intel-fpga: the operator's blank bitstream through fpgaconf", () => {
  it("is refused, saying what to configure, when no clean bitstream is given", async () => {
    const { env, ran } = answering("");
    await expect(intelFpgaDriver.cleaner!.clean(env, await target(intelFpgaDriver))).rejects.toThrow(/--intel-fpga-clean-bitstream FILE \(or CYBORG_AGENT_INTEL_FPGA_CLEAN_BITSTREAM\)/);
    expect(ran).toEqual([]);
  });
  it("programs the configured image at the PAC's PF; the digest covers the image", async () => {
    const image = join(tmp, "blank.gbs");
    writeFileSync(image, "blank image v1");
    const { env, ran } = answering("", undefined, { intelFpga: { cleanBitstream: image } });
    const r = await intelFpgaDriver.cleaner!.clean(env, await target(intelFpgaDriver));
    expect(ran).toEqual([[FPGACONF, "--bus", "0x5e", "--device", "0x00", "--function", "0x0", image]]);
    expect(r.digest).toBe(cleanDigest(r.command, "", createHash("sha256").update("blank image v1").digest("hex")));
  });
  it("fails with fpgaconf's message", async () => {
    const image = join(tmp, "blank.gbs");
    writeFileSync(image, "blank image v1");
    const { env } = answering("", "/usr/bin/fpgaconf failed (exit 1): Error writing bitstream", { intelFpga: { cleanBitstream: image } });
    await expect(intelFpgaDriver.cleaner!.clean(env, await target(intelFpgaDriver))).rejects.toThrow(/Error writing bitstream/);
  });
});

describe("intel-qat: a PCI function reset through sysfs", () => {
  it("writes 1 to the device's reset file under the sysfs root", async () => {
    const t = await target(intelQatDriver, "3d");
    const dir = join(tmp, "sys", "bus", "pci", "devices", "0000:3d:00.0");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "reset"), "");
    const r = await intelQatDriver.cleaner!.clean({ ...fixtureEnv("mixed-host"), sysfsRoot: join(tmp, "sys") }, t);
    expect(readFileSync(join(dir, "reset"), "utf8")).toBe("1");
    expect(r.command).toEqual(["sysfs-write", join(dir, "reset"), "1"]);
  });
  it("a device without a reset file: refused, naming the file", async () => {
    const t = await target(intelQatDriver, "3f");
    await expect(intelQatDriver.cleaner!.clean({ ...fixtureEnv("mixed-host"), sysfsRoot: join(tmp, "sys") }, t)).rejects.toThrow(/0000:3f:00.0\/reset does not exist/);
  });
});

describe("fake: succeeds, or fails as told", () => {
  it("cleans, or fails with --fake-clean-fail's message", async () => {
    const t = await target(fakeDriver);
    const r = await fakeDriver.cleaner!.clean(fixtureEnv("mixed-host"), t);
    expect(r.command).toEqual([FAKE_CLEAN, "--device", "0000:0c:00.0"]);
    expect(r.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    await expect(fakeDriver.cleaner!.clean(fixtureEnv("mixed-host", { config: { fake: { cleanFailure: "scrub failed: bank 3" } } }), t)).rejects.toThrow("scrub failed: bank 3");
  });
});

describe("which driver cleans a device", () => {
  const all = ["nvidia-gpu", "intel-fpga", "xilinx-fpga", "intel-qat", "fake"];
  it("by driver name, and by type where Intel's FPGA and QAT share one", () => {
    expect(cleanerFor({ drivers: all }, { deviceType: "QAT", driverNames: ["intel"] })).toBe(drivers["intel-qat"]!.cleaner);
    expect(cleanerFor({ drivers: all }, { deviceType: "FPGA", driverNames: ["intel"] })).toBe(drivers["intel-fpga"]!.cleaner);
    expect(cleanerFor({ drivers: all }, { deviceType: "GPU", driverNames: ["NVIDIA"] })).toBe(drivers["nvidia-gpu"]!.cleaner);
  });
  it("none when the driver is not enabled on this agent", () => {
    expect(cleanerFor({ drivers: ["fake"] }, { deviceType: "GPU", driverNames: ["NVIDIA"] })).toBeUndefined();
  });
});
