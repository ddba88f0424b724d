/**
 * The audit CLI on an embedded data directory: verify (clean, then one byte changed), export with
 * its filters, replay into a separate Redis database, and the refusal to replay into the live one.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { auditCommand } from "../../src/cli/audit.command.js";
import { otherDatabase, replayCommand, sameRedis } from "../../src/cli/replay.command.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startRedis, type TestRedis } from "../support/redis.js";

const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-cli-"));
const meta = { principal: "admin", correlationId: "c", causationId: "c", at: "2026-11-24T14:03:00.000Z" };

async function run(command: "audit" | "replay", args: string[]): Promise<{ out: string; err: string; exitCode: number }> {
  const lines: string[] = [];
  const errors: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
  const err = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void errors.push(a.join(" ")));
  process.exitCode = 0;
  try {
    await (command === "audit" ? auditCommand() : replayCommand()).exitOverride().parseAsync(args, { from: "user" });
    return { out: lines.join("\n"), err: errors.join("\n"), exitCode: Number(process.exitCode ?? 0) };
  } finally {
    process.exitCode = 0;
    log.mockRestore();
    err.mockRestore();
  }
}

describe("cyborg-es audit and replay", () => {
  let redis: TestRedis;

  beforeAll(async () => {
    redis = await startRedis();
    process.env.DATA_DIR = dataDir;
    process.env.LOG_LEVEL = "silent";
    const store = await LmdbEventStore.open(join(dataDir, "events"));
    for (let i = 0; i < 30; i++) {
      const type = i % 3 === 0 ? "DeviceStatusChanged" : "Other";
      await store.append(i % 2 ? `host-h${i % 4}` : `misc-${i % 5}`, [{ id: randomUUID(), type, data: { hostname: `h${i % 4}`, deviceUuid: "d", status: "ENABLED", at: meta.at, text: `line ${i}` }, metadata: meta }], "any");
    }
    // Two ARQs after them (positions 31-34): one deleted, one not.
    const group = { "resources:FPGA": "1" };
    for (const [arq, deleted] of [["a1", true], ["a2", false]] as const) {
      const created = { arqUuid: arq, deviceProfileName: "p", deviceProfileUuid: "pu", deviceProfileGroupId: 0, group, projectId: null, at: meta.at };
      const gone = { arqUuid: arq, deviceProfileName: "p", deviceProfileUuid: "pu", previousHostname: null, previousInstanceUuid: null, releasedHandleUuid: null, at: meta.at };
      const events = [{ id: randomUUID(), type: "ArqCreated", data: created, metadata: meta }];
      if (deleted) events.push({ id: randomUUID(), type: "ArqDeleted", data: gone as never, metadata: meta });
      await store.append(`arq-${arq}`, events, "no_stream");
    }
    await store.close();
  });

  afterAll(async () => {
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("verify: a clean log, then one byte changed in one event", async () => {
    const clean = await run("audit", ["verify", "--json"]);
    expect(clean.exitCode).toBe(0);
    expect(JSON.parse(clean.out)).toMatchObject({ ok: true, events: 33, hashed: 33 });

    const env = open({ path: join(dataDir, "events"), maxDbs: 8 });
    const raw = env.openDB<Buffer, number>({ name: "log", encoding: "binary" });
    const bytes = Buffer.from(raw.getBinary(17)!);
    bytes[bytes.indexOf("line 16") + 5] = "7".charCodeAt(0);
    raw.putSync(17, bytes);
    await env.close();

    const broken = await run("audit", ["verify"]);
    expect(broken.exitCode).toBe(1);
    expect(broken.out).toMatch(/BROKEN: 1 broken link; the first:\n {2}position 17 misc-1@1 \(event [0-9a-f-]+\): stored hash/);
  });

  it("export: NDJSON with metadata and hash, cut by --since/--until, --type and --stream-prefix", async () => {
    const file = join(dataDir, "part.ndjson");
    await run("audit", ["export", "--since", "3", "--until", "10", "--out", file]);
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.position)).toEqual(["4", "5", "6", "7", "8", "9", "10"]);
    expect(lines[0]).toMatchObject({ stream: expect.any(String), revision: expect.any(Number), metadata: meta, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });

    await run("audit", ["export", "--type", "DeviceStatusChanged", "--stream-prefix", "misc-", "--out", file]);
    const typed = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(typed.length).toBeGreaterThan(0);
    expect(typed.every((l) => l.type === "DeviceStatusChanged" && l.stream.startsWith("misc-"))).toBe(true);

    await expect(run("audit", ["export", "--until", "last tuesday", "--out", file])).rejects.toThrow(/--until must be a log position .* or an ISO-8601 time/);
  });

  it("replay --until without --serve replays into memory, says so and ends: it serves nothing", async () => {
    const r = await run("replay", ["--until", "12"]);
    expect(r.err).toMatch(/replayed 12 events up to position 12 into memory/);
    expect(r.err).toContain("add --serve [port] to query them");
    expect(r.err).not.toContain("serving the past");
  });

  it("replay --until into a separate Redis database; never into the live one", async () => {
    await run("replay", ["--until", "12", "--into", `${redis.url}/4`]);
    const replayed = new RedisReadStore(`${redis.url}/4`);
    expect(await replayed.getCheckpoint("device-tree")).toBe(12n);
    expect(await replayed.getCheckpoint("audit")).toBe(12n);
    await replayed.close();

    // Up to the head: the deleted ARQ is left out of the ARQ model, and the replay says so.
    const whole = await run("replay", ["--until", "33", "--into", `${redis.url}/5`]);
    expect(whole.err).toMatch(/replayed 33 events up to position 33/);
    expect(whole.err).toMatch(/the arqs model left out the events of 1 stream that had ended by then/);
    const past = new RedisReadStore(`${redis.url}/5`);
    expect(Object.keys((await past.dump("arqs")).keys).filter((k) => k.startsWith("{arqs}:arq:"))).toEqual(["{arqs}:arq:a2"]);
    await past.close();

    process.env.REDIS_URL = `${redis.url}/0`;
    try {
      await expect(run("replay", ["--until", "12", "--into", redis.url])).rejects.toThrow(/is the live read models' database \(REDIS_URL\)/);
    } finally {
      delete process.env.REDIS_URL;
    }
    expect(sameRedis("redis://127.0.0.1:6379", "redis://127.0.0.1:6379/0")).toBe(true);
    expect(sameRedis("redis://127.0.0.1:6379/1", "redis://127.0.0.1:6379/0")).toBe(false);
    // REDIS_URL naming a Redis Cluster's nodes: any of them is the live one.
    expect(sameRedis("redis://127.0.0.1:7001", "redis://127.0.0.1:7000,redis://127.0.0.1:7001")).toBe(true);
    expect(sameRedis("redis://127.0.0.1:7002", "redis://127.0.0.1:7000,redis://127.0.0.1:7001")).toBe(false);
    // The refusal suggests a database that is not the refused one.
    expect(otherDatabase("redis://127.0.0.1:6379/5")).toBe("redis://127.0.0.1:6379/6");
    expect(otherDatabase("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379/1");
  });
});
