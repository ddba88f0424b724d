/**
 * Export and replay round trips. Export a scripted scenario's log as NDJSON, import it into a
 * fresh store: the same log (ids, revisions, data, metadata, hashes), it verifies, and a service
 * on it gives the same answers. Replay the log up to a step into a separate Redis database (and
 * into memory) and serve it read-only: the answers the read models gave at that step.
 */
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { finished } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projection as audit } from "../../projections/audit/projection.js";
import { projections } from "../../projections/index.js";
import { exportLog, importLog, readExport } from "../../src/audit/export.js";
import { pastLog, pastReadStore, replayInto } from "../../src/audit/replay.js";
import { verifyLog } from "../../src/audit/verify.js";
import { loadConfig } from "../../src/infra/config.js";
import { LmdbEventStore } from "../../src/infra/eventstore/lmdb.js";
import type { RecordedEvent } from "../../src/infra/eventstore/port.js";
import { createLogger } from "../../src/infra/logger.js";
import { startService } from "../../src/service/main.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import type { ReadStore } from "../../src/infra/readstore/port.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import { TokenRegistry } from "../../src/api/auth/tokens.js";
import { startRedis, type TestRedis } from "../support/redis.js";
import { runScenario, type ScenarioIds } from "./scenario.js";

const ANSWERS = `query($host: String!, $i1: ID!, $arq: ID!, $dev: ID!) {
  devices(filter: { hostname: $host }) { totalCount nodes { uuid model status lost deployables { name attachHandles { uuid inUse acceleratorRequest { uuid state } } } } }
  acceleratorRequests(filter: { instanceUuid: $i1 }) { totalCount nodes { uuid state hostname instanceUuid attachHandleUuid revision } }
  acceleratorRequest(uuid: $arq) { uuid state revision createdAt updatedAt }
  deviceProfiles { uuid name description groups createdAt }
  resourceProviders(hostname: $host) { uuid name total used reserved traits }
  history(uuid: $dev, first: 1000) { totalCount nodes { position stream revision eventId type summary principal correlationId causationId notification hash } }
}`;

describe("export, import and replay", () => {
  let a: TestService;
  let ids: ScenarioIds;
  let redis: TestRedis;
  const tmp = mkdtempSync(join(tmpdir(), "cyborg-es-export-"));
  /** What the read models answered after the second bind, and at which position. */
  let then: { position: bigint; vars: Record<string, string>; answer: unknown } | undefined;
  const vars = (k: ScenarioIds) => ({ host: k.host, i1: k.instances[1]!, arq: k.arqs[0] ?? "", dev: k.devices[0] ?? "" });

  beforeAll(async () => {
    redis = await startRedis();
    a = await startTestService();
    ids = await runScenario(a, async (label, known) => {
      if (label !== "both ARQs bound") return;
      then = { position: (await a.service.store.headPosition())!, vars: vars(known), answer: await a.ok("admin", ANSWERS, vars(known)) };
    });
  }, 120_000);

  afterAll(async () => {
    await a?.close();
    await redis?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("export, import into a fresh store: the same log, verified, and the same answers", async () => {
    const file = join(tmp, "log.ndjson");
    const out = createWriteStream(file);
    const exported = await exportLog(a.service.store, out, { pageSize: 7 });
    out.end();
    await finished(out);
    const original = await a.service.store.readAll();
    expect(exported.events).toBe(original.length);
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(original.length);

    const dir = join(tmp, "imported");
    const b = await LmdbEventStore.open(dir);
    const imported = await importLog(b, readExport(createReadStream(file)), { batch: 10 });
    expect(imported.events).toBe(original.length);
    const copy = await b.readAll();
    // Everything but the time the importing store recorded them.
    const same = (e: RecordedEvent) => ({ ...e, recordedAt: undefined });
    expect(copy.map(same)).toEqual(original.map(same));
    const report = await verifyLog(b);
    expect(report).toMatchObject({ ok: true, events: original.length, hashed: original.length });
    expect(report.chain).toEqual((await verifyLog(a.service.store)).chain);
    await b.close();

    const onCopy = await startTestService({ env: { DATA_DIR: join(tmp, "b-data") }, overrides: { store: await LmdbEventStore.open(dir) } });
    try {
      expect(await onCopy.ok("admin", ANSWERS, vars(ids))).toEqual(await a.ok("admin", ANSWERS, vars(ids)));
    } finally {
      await onCopy.close();
    }
  });

  it("import refuses an export with a changed line, naming the event", async () => {
    const file = join(tmp, "log.ndjson");
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const victim = JSON.parse(lines[20]!);
    victim.metadata.principal = "someone-else";
    lines[20] = JSON.stringify(victim);
    const changed = join(tmp, "changed.ndjson");
    const w = createWriteStream(changed);
    w.end(lines.join("\n") + "\n");
    await finished(w);
    const b = await LmdbEventStore.open(join(tmp, "refused"));
    await expect(importLog(b, readExport(createReadStream(changed)))).rejects.toThrow(new RegExp(`event ${victim.id} .* does not match its hash`));
    await b.close();
  });

  it("import refuses an export that cuts streams, saying why (not as a changed line)", async () => {
    const lines = readFileSync(join(tmp, "log.ndjson"), "utf8").trim().split("\n");
    const cut = join(tmp, "cut.ndjson");
    const w = createWriteStream(cut);
    // As `audit export --since`: the log from its middle, streams begun earlier without their start.
    w.end(lines.slice(Math.floor(lines.length / 2)).join("\n") + "\n");
    await finished(w);
    const b = await LmdbEventStore.open(join(tmp, "cut-refused"));
    await expect(importLog(b, readExport(createReadStream(cut)))).rejects.toThrow(/is neither in the file nor in the store: import needs whole streams/);
    await b.close();
  });

  for (const [target, mode] of [["redis", "embedded"], ["memory", "embedded"], ["redis", "redis"]] as const) {
    it(`replay --until into ${target} (${mode} mode): a read-only server answers as the read models did then`, async () => {
      const readStore: ReadStore = target === "redis" ? new RedisReadStore(`${redis.url}/3`) : new MemoryReadStore();
      // Redis mode: the live read models in Redis (their audit index at the head), and the replay leaves the index out.
      const liveIndex = mode === "redis";
      if (liveIndex) await replayInto(a.service.store, new RedisReadStore(`${redis.url}/4`), [audit], (await a.service.store.headPosition())!);
      await replayInto(a.service.store, readStore, projections, then!.position, undefined, liveIndex);
      expect(Object.keys((await readStore.dump("audit")).keys).length > 0).toBe(!liveIndex);
      const dataDir = mkdtempSync(join(tmp, "past-"));
      const env = { PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent", ...(liveIndex ? { REDIS_URL: `${redis.url}/4` } : {}) };
      const config = { ...loadConfig(env), roles: new Set(["api"] as const) };
      const tokens = new TokenRegistry(Object.entries(TOKENS).map(([name, t]) => ({ name, ...t })) as never);
      const wrapReadStore = pastReadStore(readStore, liveIndex, then!.position);
      const past = await startService(config, createLogger("silent"), { tokens, store: pastLog(a.service.store, then!.position), wrapReadStore });
      try {
        const res = await fetch(past.url!, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.admin.token}` },
          body: JSON.stringify({ query: ANSWERS, variables: then!.vars }),
        });
        const body = (await res.json()) as { data: unknown };
        expect(body.data).toEqual(then!.answer);
        // The past takes no commands.
        const refused = await fetch(past.url!, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.service.token}` },
          body: JSON.stringify({ query: `mutation { unbindAcceleratorRequests(arqUuids: ["${ids.arqs[0]}"]) { uuid } }` }),
        });
        const err = ((await refused.json()) as { errors: Array<{ message: string; extensions: { code: string } }> }).errors[0]!;
        expect(err.extensions.code).toBe("FORBIDDEN");
        expect(err.message).toMatch(/as it was at position \d+ .* takes no commands/);
      } finally {
        await past.close();
      }
    });
  }
});
