/**
 * Cleaning a Xilinx Alveo card: XRT's `xbutil reset --device <user BDF> --force` (a hot reset of
 * the card, which clears the loaded xclbin). xbutil addresses the card by its user function, the
 * one after the management function the device is reported at (0000:d8:00.0 -> 0000:d8:00.1).
 * It prints "Performing 'HOT Reset' on '<BDF>'" then "Successfully reset Device[<BDF>]"; when the
 * reset fails it prints "Reset failed on Device[<BDF>]" and still exits 0, so the answer is read.
 */
import type { Cleaner } from "./driver.js";
import { bdfOf, cleanDigest, runClean } from "./clean-step.js";

export const XBUTIL = "/opt/xilinx/xrt/bin/xbutil";

export const xilinxFpgaCleaner: Cleaner = {
  driverNames: ["XILINX"],
  command: ({ controlPath }) => [XBUTIL, "reset", "--device", bdfOf({ ...controlPath, function: String(Number(controlPath.function) + 1) }), "--force"],
  async clean(env, target) {
    const command = this.command(target);
    const answer = await runClean(env, command);
    if (!/Successfully reset Device\[/.test(answer)) throw new Error(`${command.join(" ")} did not reset the card: ${answer.trim() || "(no output)"}`);
    return { command, digest: cleanDigest(command, answer) };
  },
};
