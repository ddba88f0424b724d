/**
 * Crash safety of LmdbEventStore: a child process runs a storm of concurrent multi-event appends
 * and prints each acknowledged append; we SIGKILL it mid-storm, reopen the store and check that
 * every acknowledged append is there and that no append is half-written.
 *
 * The child runs the real adapter: beforeAll transpiles src/infra/eventstore and the child script with
 * SWC (already a dev dependency, milliseconds) into a temp dir whose node_modules links to ours.
 * SIGKILL loses the process, not the OS page cache, so this checks atomicity and that an ack is
 * only sent after the commit; fsync-before-ack (power loss) is lmdb's `overlappingSync: false`.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { transformFile } from "@swc/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import type { Ack } from "./fixtures/lmdb-writer.js";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const EVENTS_PER_APPEND = 4; // as in fixtures/lmdb-writer.ts
let buildDir: string;
let writerJs: string;

async function transpile(files: string[], outDir: string): Promise<void> {
  for (const file of files) {
    const { code } = await transformFile(file, {
      jsc: { parser: { syntax: "typescript" }, target: "es2022" },
      module: { type: "es6" },
    });
    const out = join(outDir, relative(repo, file)).replace(/\.ts$/, ".js");
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, code);
  }
}

beforeAll(async () => {
  buildDir = await mkdtemp(join(tmpdir(), "cyborg-es-crash-build-"));
  const srcDir = join(repo, "src/infra/eventstore");
  const sources = (await readdir(srcDir)).filter((f) => f.endsWith(".ts")).map((f) => join(srcDir, f));
  const writer = join(repo, "test/eventstore/fixtures/lmdb-writer.ts");
  await transpile([...sources, writer], buildDir);
  await writeFile(join(buildDir, "package.json"), JSON.stringify({ type: "module" }));
  await symlink(join(repo, "node_modules"), join(buildDir, "node_modules"), "dir");
  writerJs = join(buildDir, "test/eventstore/fixtures/lmdb-writer.js");
});

afterAll(async () => {
  if (buildDir) await rm(buildDir, { recursive: true, force: true });
});

/** Runs the writer until `acksBeforeKill` appends are acknowledged, then SIGKILLs it. */
async function stormAndKill(dir: string, label: string, acksBeforeKill: number): Promise<Ack[]> {
  const child = spawn(process.execPath, [writerJs, dir, label], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((res) => child.once("exit", (code, sig) => res(sig ?? code)));
  const acks: Ack[] = [];
  let killed = false;
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === "ready") continue;
    acks.push(JSON.parse(line) as Ack);
    if (!killed && acks.length >= acksBeforeKill) {
      killed = true;
      child.kill("SIGKILL");
    }
  }
  const how = await exited;
  if (how !== "SIGKILL") throw new Error(`writer exited by ${String(how)} before the kill:\n${stderr}`);
  return acks;
}

async function verify(dir: string, acks: Ack[]): Promise<RecordedEvent[]> {
  const store = await LmdbEventStore.open(dir);
  try {
    const log = await store.readAll();
    // lmdb numbers events 1, 2, 3, ...: after a crash the log is a prefix with no hole.
    expect(log.map((e) => e.position)).toEqual(log.map((_, i) => BigInt(i + 1)));

    // Every stream is contiguous from revision 0, and readStream agrees with the global log.
    const byStream = new Map<string, RecordedEvent[]>();
    for (const e of log) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e]);
    for (const [stream, events] of byStream) {
      expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => i));
      expect((await store.readStream(stream)).map((e) => e.id)).toEqual(events.map((e) => e.id));
    }

    // No append is half-written: each one present has all its events, adjacent in stream and log.
    const byAppend = new Map<string, RecordedEvent[]>();
    for (const e of log) {
      if (e.type !== "Stormed") continue; // our own probe appends below
      const { appendId } = e.data as { appendId: string };
      byAppend.set(appendId, [...(byAppend.get(appendId) ?? []), e]);
    }
    for (const [appendId, events] of byAppend) {
      const [first] = events;
      const shape = events.map((e) => [e.stream, e.revision - first!.revision, e.position - first!.position, (e.data as { k: number }).k]);
      expect(shape, appendId).toEqual(events.map((_, k) => [first!.stream, k, BigInt(k), k]));
      expect(events).toHaveLength(EVENTS_PER_APPEND);
    }

    // Every acknowledged append is there, where the ack said.
    const byId = new Map(log.map((e) => [e.id, e]));
    for (const ack of acks) {
      const events = ack.ids.map((id) => byId.get(id));
      expect(events.every(Boolean), `acknowledged append ${ack.appendId} is missing`).toBe(true);
      const expected = ack.ids.map((_, k) => [ack.stream, ack.revision - EVENTS_PER_APPEND + 1 + k]);
      expect(events.map((e) => [e!.stream, e!.revision])).toEqual(expected);
      expect(events.at(-1)!.position).toBe(BigInt(ack.position));
    }

    // The store keeps working where the crashed writer stopped.
    const meta = { principal: "t", correlationId: "c", causationId: "c", at: "2026-11-22T00:00:00Z" };
    const probe = { id: `probe-${log.length}`, type: "Probe", data: {}, metadata: meta };
    const r = await store.append(probe.id, [probe], "no_stream");
    expect(r.position).toBe(BigInt(log.length + 1));
    return log;
  } finally {
    await store.close();
  }
}

describe("LmdbEventStore crash safety", () => {
  it("keeps every acknowledged append and no half-written one across SIGKILL mid-storm, twice", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cyborg-es-crash-"));
    try {
      const first = await stormAndKill(dir, "r1", 1500);
      const log1 = await verify(dir, first);
      expect(log1.length).toBeGreaterThanOrEqual(first.length * EVENTS_PER_APPEND);

      // A second storm on the recovered store, killed again: both rounds' acks must survive.
      const second = await stormAndKill(dir, "r2", 1500);
      const log2 = await verify(dir, [...first, ...second]);
      expect(log2.length).toBeGreaterThan(log1.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
