/**
 * Program commands, checked against the fixtures the discovery tests use: each FPGA found in a
 * fixture host is programmed at the control path its driver reported (cyborg-reference 5.6).
 */
import { describe, expect, it } from "vitest";
import type { DriverEnv, ProgramTarget } from "../../../src/clients/agent/drivers/driver.js";
import { FAKE_PROGRAM, fakeDriver } from "../../../src/clients/agent/drivers/fake.js";
import { FPGACONF, intelFpgaDriver } from "../../../src/clients/agent/drivers/intel-fpga.js";
import { XBMGMT, xilinxFpgaDriver } from "../../../src/clients/agent/drivers/xilinx-fpga.js";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { fixtureEnv } from "./fixture-env.js";

const FILE = "/var/tmp/cyborg-es-bitstream-x/nlb3.gbs";
const target = (d: DriverDevice, deployable = d.deployables.at(-1)!.name): ProgramTarget => ({
  controlPath: d.controlPath.info as ProgramTarget["controlPath"],
  deployableName: deployable,
  file: FILE,
  bitstream: { id: "0a000000-0000-4000-8000-00000000000a", name: "nlb3.gbs", functionId: "f7df405c-bd7a-cf72-22f1-44b0b93acd18" },
});
/** A DriverEnv whose program commands are recorded, not run. */
function recording(env: DriverEnv, fail?: string) {
  const ran: string[][] = [];
  return {
    ran,
    env: {
      ...env,
      run: async (argv: readonly string[]) => {
        ran.push([...argv]);
        if (fail) throw new Error(fail);
        return "";
      },
    } satisfies DriverEnv,
  };
}

describe("intel-fpga: fpgaconf at the PAC's PF", () => {
  it("the mixed host's PAC Arria 10 (SR-IOV on)", async () => {
    const [pac] = await intelFpgaDriver.discover(fixtureEnv("mixed-host"));
    const { env, ran } = recording(fixtureEnv("mixed-host"));
    const { command } = await intelFpgaDriver.programmer!.program(env, target(pac!));
    expect(command).toEqual([FPGACONF, "--bus", "0x5e", "--device", "0x00", "--function", "0x0", FILE]);
    expect(ran).toEqual([command]);
    expect(FPGACONF).toBe("/usr/bin/fpgaconf");
  });
  it("every card of the variants fixture, at its own PF", async () => {
    const cards = (await intelFpgaDriver.discover(fixtureEnv("fpga-variants"))).filter((d) => !d.stub);
    expect(cards.length).toBeGreaterThan(1);
    expect(cards.map((d) => intelFpgaDriver.programmer!.command(target(d)).slice(1, 7))).toEqual(
      cards.map((d) => ["--bus", `0x${d.controlPath.info.bus}`, "--device", `0x${d.controlPath.info.device}`, "--function", `0x${d.controlPath.info.function}`]),
    );
    expect(intelFpgaDriver.programmer!.command(target(cards.find((d) => d.controlPath.info.bus === "1b")!))).toEqual([
      FPGACONF, "--bus", "0x1b", "--device", "0x00", "--function", "0x0", FILE,
    ]);
  });
  it("a failing fpgaconf fails with its message", async () => {
    const [pac] = await intelFpgaDriver.discover(fixtureEnv("mixed-host"));
    const { env } = recording(fixtureEnv("mixed-host"), "/usr/bin/fpgaconf failed (exit 1): Error writing bitstream");
    await expect(intelFpgaDriver.programmer!.program(env, target(pac!))).rejects.toThrow(/Error writing bitstream/);
  });
  it("programs what intel discovery reports (driver name intel), not the QAT cards that share it", () => {
    expect(intelFpgaDriver.programmer!.driverNames).toEqual(["intel"]);
  });
});

describe("xilinx-fpga: xbmgmt program --base at the card's management PF", () => {
  it("the mixed host's U250", async () => {
    const [u250] = await xilinxFpgaDriver.discover(fixtureEnv("mixed-host"));
    const { env, ran } = recording(fixtureEnv("mixed-host"));
    const { command } = await xilinxFpgaDriver.programmer!.program(env, target(u250!));
    expect(command).toEqual([XBMGMT, "program", "--device", "0000:d8:00.0", "--base", "--image", FILE]);
    expect(ran).toEqual([command]);
    expect(xilinxFpgaDriver.programmer!.driverNames).toEqual(["XILINX"]);
  });
});

describe("fake: a programmable FPGA that keeps what it was programmed with", () => {
  const config = (over = {}) => ({ fake: { regionType: "r1", ...over } });
  it("reports its region type, then the function it was programmed with, listed last", async () => {
    const env = fixtureEnv("no-accelerators", { hostname: "fake-keeps", config: config() });
    const [before] = await fakeDriver.discover(env);
    expect(before!.deployables[0]!.attributes).toEqual([
      { key: "rc", value: "FPGA" },
      { key: "trait0", value: "CUSTOM_FAKE_DEVICE" },
      { key: "trait1", value: "CUSTOM_FPGA_FAKE_REGION_R1" },
    ]);
    const { command } = await fakeDriver.programmer!.program(env, target(before!));
    expect(command).toEqual([FAKE_PROGRAM, "--device", "0000:0c:00.0", "--region", "fake-keeps_FakeDevice", FILE]);
    const [after] = await fakeDriver.discover(env);
    expect(after!.deployables[0]!.attributes.at(-1)).toEqual({ key: "trait2", value: "CUSTOM_FPGA_FAKE_FUNCTION_F7DF405C_BD7A_CF72_22F1_44B0B93ACD18" });
  });
  it("fails as configured, leaving the device as it was", async () => {
    const env = fixtureEnv("no-accelerators", { hostname: "fake-fails", config: config({ programFailure: "device busy", programDelayMs: 30 }) });
    const [d] = await fakeDriver.discover(env);
    await expect(fakeDriver.programmer!.program(env, target(d!))).rejects.toThrow("device busy");
    expect((await fakeDriver.discover(env))[0]!.deployables[0]!.attributes).toHaveLength(3);
  });
});
