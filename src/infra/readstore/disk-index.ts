/**
 * Read models kept on disk beside the embedded log: the audit index (it grows with the log, so in
 * memory it would cost the process about 11-15 KB a boot flow for ever), and the models
 * READ_MODELS_ON_DISK names (a large fleet's, kept out of the JavaScript heap). Unlike the
 * in-memory models they outlive the process, so before the projector trusts one, it must be the
 * model of THIS log: the directory remembers the id of the log's first event
 * (`log-identity.json`), and a model is dropped, to be rebuilt from the log, when
 *   - it has a checkpoint but the log is empty, or ends before that checkpoint (a truncated or
 *     replaced log), or
 *   - the log's first event is not the one it remembers, or it remembers none (fails closed: an
 *     index whose log cannot be told is not trusted).
 * A rebuild costs one replay of the log for that model (bench/RESULTS.md: audit index on disk).
 *
 * One process at a time projects into the directory (`owner.json`: its pid and the machine's boot
 * id): a second server started on the same DATA_DIR gets undefined and keeps the models in memory
 * (two projectors writing one model would undo each other's checkpoints). A holder whose process
 * is gone, or that ran before the machine restarted, is replaced.
 */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { EventStore } from "../eventstore/port.js";
import type { Logger } from "../logger.js";
import { LmdbReadStore } from "./lmdb.js";
import { OWNER_FILE, takeOwnership } from "./dir-owner.js";

const IDENTITY_FILE = "log-identity.json";

interface LogIdentity {
  firstEventId: string;
}

/**
 * Opens the on-disk store in `dir` for `projections`, dropping each model that is not that of
 * `events`; undefined when another process holds the directory (see above).
 */
export async function openDiskIndex(dir: string, projections: readonly string[], events: EventStore, log?: Logger): Promise<LmdbReadStore | undefined> {
  await mkdir(dir, { recursive: true });
  const names = projections.join(", ");
  if (!(await takeOwnership(dir))) {
    log?.warn({ projections, dir }, `another process projects into ${dir}: this one keeps ${names} in memory`);
    return undefined;
  }
  const release = () => rm(join(dir, OWNER_FILE), { force: true });
  let store: LmdbReadStore | undefined;
  try {
    const [head, [first], saved] = await Promise.all([events.headPosition(), events.readAll({ maxCount: 1 }), readIdentity(dir)]);
    // An empty log: its first event is learnt before the model's first write (which follows it).
    const learn = async () => {
      const [e] = await events.readAll({ maxCount: 1 });
      if (e) await writeIdentity(dir, { firstEventId: e.id });
    };
    store = await LmdbReadStore.open(dir, { beforeFirstWrite: first ? undefined : learn, afterClose: release, writeThread: true });
    for (const projection of projections) {
      const checkpoint = await store.getCheckpoint(projection);
      const stale = checkpoint === undefined ? undefined : whyStale(checkpoint, head, first?.id, saved);
      if (stale) {
        log?.warn({ projection, dir, checkpoint: checkpoint!.toString() }, `the ${projection} model on disk is not this log's (${stale}): rebuilding it from the log`);
        await store.drop(projection);
      }
    }
    if (first && saved?.firstEventId !== first.id) await writeIdentity(dir, { firstEventId: first.id });
    log?.info({ projections, dir, writeThread: store.writesOnThread }, `${names} on disk in ${dir}, written ${store.writesOnThread ? "on a thread of its own" : "on the main thread"}`);
    return store;
  } catch (err) {
    await (store ? store.close() : release());
    throw err;
  }
}

function whyStale(checkpoint: bigint, head: bigint | undefined, firstId: string | undefined, saved: LogIdentity | undefined): string | undefined {
  if (head === undefined || firstId === undefined) return "the log is empty";
  if (checkpoint > head) return `the log ends at ${head}, before its checkpoint ${checkpoint}`;
  if (saved === undefined) return `${IDENTITY_FILE} is missing`;
  if (saved.firstEventId !== firstId) return "the log's first event is another";
  return undefined;
}

async function readIdentity(dir: string): Promise<LogIdentity | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, IDENTITY_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LogIdentity>;
    return typeof parsed.firstEventId === "string" ? { firstEventId: parsed.firstEventId } : undefined;
  } catch {
    return undefined; // unreadable: as if missing (the model is then rebuilt)
  }
}

/** Written whole or not at all (a rename), so a crash never leaves half an identity. */
async function writeIdentity(dir: string, identity: LogIdentity): Promise<void> {
  const file = join(dir, IDENTITY_FILE);
  await writeFile(`${file}.tmp`, JSON.stringify(identity) + "\n");
  await rename(`${file}.tmp`, file);
}
