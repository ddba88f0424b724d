/**
 * One process at a time writes a directory of state it rebuilt from the log (the audit index on
 * disk, the read-model snapshots): `owner.json` holds its pid and the machine's boot id. A holder
 * whose process is gone, or that ran before the machine restarted, is replaced.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { bootId } from "./lmdb-unsynced.js";

export const OWNER_FILE = "owner.json";

interface Owner {
  pid: number;
  bootId?: string;
}

/** Takes `dir` for this process, unless a live process of this boot holds it (this one included). */
export async function takeOwnership(dir: string): Promise<boolean> {
  const file = join(dir, OWNER_FILE);
  const me: Owner = { pid: process.pid, bootId: await bootId() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, JSON.stringify(me) + "\n", { flag: "wx" });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = await readJson<Owner>(file);
    if (holder !== undefined && holder.bootId === me.bootId && alive(holder.pid)) return false;
    await rm(file, { force: true }); // its process is gone, or the machine restarted since
  }
  return false;
}

function alive(pid: unknown): boolean {
  if (typeof pid !== "number") return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Gives `dir` back (its owner file removed). */
export async function releaseOwnership(dir: string): Promise<void> {
  await rm(join(dir, OWNER_FILE), { force: true });
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}
