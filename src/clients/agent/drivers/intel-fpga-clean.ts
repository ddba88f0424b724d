/**
 * Cleaning an Intel PAC: its region is programmed with the blank or golden bitstream the operator
 * gave the agent (--intel-fpga-clean-bitstream), with the same `fpgaconf` as any programming. The
 * digest covers the image's sha256, so the record says which image the card was left with.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Cleaner } from "./driver.js";
import { cleanDigest, runClean } from "./clean-step.js";
import { FPGACONF } from "./opae.js";

export const intelFpgaCleaner: Cleaner = {
  driverNames: ["intel"],
  deviceTypes: ["FPGA"],
  command: ({ controlPath: pci }) => [FPGACONF, "--bus", `0x${pci.bus}`, "--device", `0x${pci.device}`, "--function", `0x${pci.function}`],
  async clean(env, target) {
    const image = env.config.intelFpga?.cleanBitstream;
    if (!image) {
      throw new Error(
        "no clean bitstream is configured for Intel FPGAs: give the agent --intel-fpga-clean-bitstream FILE " +
          "(or CYBORG_AGENT_INTEL_FPGA_CLEAN_BITSTREAM), a blank or golden image for the card",
      );
    }
    let content: Buffer;
    try {
      content = await readFile(image);
    } catch (err) {
      throw new Error(`cannot read the clean bitstream ${image}: ${(err as Error).message}`);
    }
    const command = [...this.command(target), image];
    const answer = await runClean(env, command);
    return { command, digest: cleanDigest(command, answer, createHash("sha256").update(content).digest("hex")) };
  },
};
