/** `cyborg-es audit archive` on an embedded data directory: a dry run, a run, then verify over archive and live log. */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { auditCommand } from "../../src/cli/audit.command.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";

const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-archive-cli-"));
const meta = { principal: "admin", correlationId: "c", causationId: "c", at: "2026-11-24T14:03:00.000Z" };
const ev = (type: string, data: unknown) => ({ id: randomUUID(), type, data, metadata: meta });

async function audit(args: string[]): Promise<{ out: string; exitCode: number }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void lines.push(a.join(" ")));
  const err = vi.spyOn(console, "error").mockImplementation(() => undefined);
  process.exitCode = 0;
  try {
    await auditCommand().exitOverride().parseAsync(args, { from: "user" });
    return { out: lines.join("\n"), exitCode: Number(process.exitCode ?? 0) };
  } finally {
    process.exitCode = 0;
    log.mockRestore();
    err.mockRestore();
  }
}

describe("cyborg-es audit archive", () => {
  beforeAll(async () => {
    process.env.DATA_DIR = dataDir;
    process.env.LOG_LEVEL = "silent";
    const store = await LmdbEventStore.open(join(dataDir, "events"));
    await store.append("host-h1", [ev("Other", { n: 0 })], "any");
    for (const arq of ["a1", "a2", "a3"]) {
      await store.append(`arq-${arq}`, [ev("ArqCreated", { arqUuid: arq, deviceProfileUuid: "pu" })], "no_stream");
      await store.append("host-h1", [ev("Other", { arq })], "any");
      if (arq !== "a3") await store.append(`arq-${arq}`, [ev("ArqDeleted", { arqUuid: arq, deviceProfileUuid: "pu", previousInstanceUuid: null, releasedHandleUuid: null })], 0);
    }
    await store.close();
  });

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("counts in a dry run, archives, and verify then walks archive and live log together", async () => {
    const dry = await audit(["archive", "--days", "0", "--dry-run", "--json"]);
    expect(JSON.parse(dry.out)).toMatchObject({ dryRun: true, streams: 2, events: 4, segments: 0 });
    const done = await audit(["archive", "--days", "0", "--json"]);
    expect(JSON.parse(done.out)).toMatchObject({ dryRun: false, streams: 2, events: 4, segments: 1 });
    const verified = await audit(["verify", "--json"]);
    expect(verified.exitCode).toBe(0);
    expect(JSON.parse(verified.out)).toMatchObject({ ok: true, events: 9 });
    const again = await audit(["archive", "--days", "0", "--json"]);
    expect(JSON.parse(again.out)).toMatchObject({ streams: 0, segments: 0 });
  });

  it("refuses a number of days that is not one", async () => {
    await expect(audit(["archive", "--days", "soon"])).rejects.toThrow(/--days must be a number of days/);
  });
});
