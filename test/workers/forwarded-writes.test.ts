/**
 * An API worker's writes, sent to the primary over a channel (here an in-memory pair standing in
 * for node:cluster's IPC): the primary's refusals arrive with their class, code and details, a
 * commit anywhere wakes the worker's subscriptions, and a worker whose primary is gone refuses
 * to write instead of hanging.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeError, encodeError } from "../../src/infra/cluster/error-codec.js";
import { ForwardedWritesStore, PrimaryGoneError } from "../../src/infra/cluster/forwarded-writes.js";
import { channelPair } from "./channel-pair.js";
import { CommitSignallingStore, serveWrites } from "../../src/infra/cluster/write-server.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { WrongExpectedRevisionError } from "../../src/infra/eventstore/port.js";

const event = (id: string) => ({ id, type: "Something", data: { n: 1 }, metadata: { principal: "test", correlationId: id, causationId: id, at: "2026-11-28T00:00:00.000Z" } });

let dir: string;
let primaryLog: LmdbEventStore;
let workerLog: LmdbEventStore;
let primary: CommitSignallingStore;
let worker: ForwardedWritesStore;
let closeChannel: () => void;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "cyborg-es-forwarded-"));
  primaryLog = await LmdbEventStore.open(dir);
  workerLog = await LmdbEventStore.open(dir);
  const [workerEnd, primaryEnd, close] = channelPair();
  closeChannel = close;
  primary = new CommitSignallingStore(primaryLog, () => primaryEnd.send({ cyborg: "committed" }));
  serveWrites(primary, primaryEnd);
  worker = new ForwardedWritesStore(workerLog, workerEnd);
});
afterEach(async () => {
  await worker.close();
  await primaryLog.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a worker's writes through the primary", () => {
  it("appends at the expected revision and reads its write at once", async () => {
    const r = await worker.append("s-1", [event("e1")], "no_stream");
    expect(r.revision).toBe(0);
    expect(typeof r.position).toBe("bigint");
    expect((await worker.readStream("s-1")).map((e) => e.id)).toEqual(["e1"]);
  });

  it("refuses a stale revision with the store's own error, code and details", async () => {
    await primary.append("s-2", [event("a")], "no_stream");
    const err = await worker.append("s-2", [event("b")], "no_stream").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WrongExpectedRevisionError);
    expect(err).toMatchObject({ code: "CONFLICT", stream: "s-2", expected: "no_stream", actual: 0 });
    const seq = await worker.appendSequence([
      { stream: "s-3", events: [event("c")], expectedRevision: "no_stream" },
      { stream: "s-2", events: [event("d")], expectedRevision: 5 },
    ]);
    expect(seq.appended).toHaveLength(1);
    expect(seq.refusal).toBeInstanceOf(WrongExpectedRevisionError);
  });

  it("wakes the worker's subscription on a commit another process made", async () => {
    const sub = worker.subscribeToAll();
    const it = sub[Symbol.asyncIterator]();
    const next = it.next();
    await primary.append("s-4", [event("x")], "no_stream");
    expect((await next).value.id).toBe("x");
    await sub.close();
  });

  it("refuses to write once the primary is gone", async () => {
    closeChannel();
    await expect(worker.append("s-5", [event("y")], "no_stream")).rejects.toBeInstanceOf(PrimaryGoneError);
  });
});

describe("errors across the channel", () => {
  it("keep the class of built-in errors, and the name, message and fields of others", () => {
    const typed = decodeError(structuredClone(encodeError(new TypeError("stream name must be a non-empty string"))));
    expect(typed).toBeInstanceOf(TypeError);
    const custom = Object.assign(new Error("no"), { name: "QuotaError", code: "QUOTA_EXCEEDED", details: { limit: 2 } });
    expect(decodeError(structuredClone(encodeError(custom)))).toMatchObject({ name: "QuotaError", message: "no", code: "QUOTA_EXCEEDED", details: { limit: 2 } });
  });
});
