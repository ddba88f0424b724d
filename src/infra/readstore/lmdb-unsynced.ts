/**
 * LmdbReadStore commits without syncing (LMDB's noSync): on a 2 vCPU VM a flow-sized batch then
 * costs about 0.35 ms of CPU instead of 0.95 (bench/RESULTS.md, the reliability soak).
 * A process that dies loses nothing by it (its commits are in the OS's page cache); a machine that
 * crashes or loses power can leave the file corrupt, undetectably. So the directory carries a mark
 * while the store is open (`unsynced.json`, with the machine's boot id, synced to disk before the
 * first commit), cleared at a clean close after a forced sync. Opened with a mark left by another
 * boot of the machine (or unreadable, or where there is no boot id to compare), the store starts
 * empty: its files are removed, and the projector rebuilds the model from the log.
 */
import { open, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";

const MARK = "unsynced.json";
/** What LMDB keeps in a directory. */
const LMDB_FILES = ["data.mdb", "lock.mdb"];

/** Linux's id of this boot of the machine; undefined elsewhere. */
export async function bootId(): Promise<string | undefined> {
  return readFile("/proc/sys/kernel/random/boot_id", "utf8").then((s) => s.trim(), () => undefined);
}

/**
 * Before the environment opens: empties `dir` when a mark says it may not have survived a machine
 * restart, then marks it for this boot. Returns whether it emptied it.
 */
export async function markUnsynced(dir: string): Promise<boolean> {
  const boot = await bootId();
  const mark = await readFile(join(dir, MARK), "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  let emptied = false;
  if (mark !== undefined && (boot === undefined || markedBoot(mark) !== boot)) {
    for (const f of LMDB_FILES) await rm(join(dir, f), { force: true });
    emptied = true;
  }
  await writeSynced(join(dir, MARK), JSON.stringify({ bootId: boot ?? null }) + "\n");
  return emptied;
}

/** After a clean close, its commits synced: the mark goes. */
export async function clearUnsynced(dir: string): Promise<void> {
  await rm(join(dir, MARK), { force: true });
}

function markedBoot(text: string): unknown {
  try {
    return (JSON.parse(text) as { bootId?: unknown }).bootId;
  } catch {
    return undefined;
  }
}

/** The file and its directory entry on disk before it returns. */
async function writeSynced(file: string, text: string): Promise<void> {
  const fh = await open(file, "w");
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  const dir = await open(dirname(file), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
