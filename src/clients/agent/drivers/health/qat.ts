/**
 * Intel QAT health from sysfs (the kernel's Documentation/ABI/testing/sysfs-driver-qat):
 * `qat/state` under the device's directory reads "up" or "down". A kernel or device without it
 * says nothing.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { OK_PART, reason, unreadable, type HealthPart } from "./part.js";

export async function qatHealth(deviceDir: string): Promise<HealthPart> {
  let state: string;
  try {
    state = (await readFile(join(deviceDir, "qat", "state"), "utf8")).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return OK_PART;
    return unreadable("qat/state", (err as Error).message);
  }
  if (state === "up") return OK_PART;
  if (state === "down") return { status: "CRITICAL", reasons: [reason("QAT_DOWN", "the QAT device is down (qat/state)")] };
  return unreadable("qat/state", `unexpected state ${JSON.stringify(state)}`);
}
