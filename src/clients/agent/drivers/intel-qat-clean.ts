/**
 * Cleaning an Intel QAT device: a PCI function reset through sysfs (writing 1 to
 * /sys/bus/pci/devices/<BDF>/reset), which drops its rings and keys. There is no tool: the
 * command recorded is the write, `sysfs-write <file> 1`.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Cleaner } from "./driver.js";
import { bdfOf, cleanDigest } from "./clean-step.js";
import { pciDeviceDir } from "./sysfs.js";

export const SYSFS_WRITE = "sysfs-write";

export const intelQatCleaner: Cleaner = {
  driverNames: ["intel"],
  deviceTypes: ["QAT"],
  command: ({ controlPath }) => [SYSFS_WRITE, join(pciDeviceDir("/sys", bdfOf(controlPath)), "reset"), "1"],
  async clean(env, target) {
    const file = join(pciDeviceDir(env.sysfsRoot, bdfOf(target.controlPath)), "reset");
    const command = [SYSFS_WRITE, file, "1"];
    try {
      await writeFile(file, "1");
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === "ENOENT") throw new Error(`${file} does not exist: the device at ${bdfOf(target.controlPath)} offers no function reset (or is gone)`);
      if (e.code === "EACCES" || e.code === "EPERM") throw new Error(`cannot write ${file}: the agent needs root (or CAP_SYS_ADMIN) to reset a PCI function`);
      throw new Error(`writing ${file} failed: ${e.message}`);
    }
    return { command, digest: cleanDigest(command, "") };
  },
};
