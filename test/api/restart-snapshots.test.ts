/**
 * The embedded service across a restart: its in-memory read models come back from their snapshots
 * (DATA_DIR/read-models), and the binder's and invariant checker's folds from theirs, instead of
 * a replay of the log; a snapshot it cannot trust is refused
 * with a log line and that model rebuilt; SNAPSHOT_INTERVAL_S=0 writes none. With Redis, a
 * restart against the live Redis finds its models there and rebuilds none.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { RedisReadStore } from "../../src/infra/readstore/redis.js";
import { startRedis } from "../support/redis.js";
import { hostDevices } from "../audit/scenario.js";
import { capturingLogger } from "../support/log-lines.js";
import { startTestService } from "./harness.js";
import * as op from "./operations.js";

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cyborg-es-restart-"));
  dirs.push(d);
  return d;
};

const DEVICES = `{ devices(filter: { hostname: "compute1" }) { totalCount nodes { uuid type } } deviceProfiles { name } }`;

describe("restarting the embedded service", () => {
  it("loads its read models from their snapshots and replays nothing; refuses a torn one with a log line and rebuilds that model", async () => {
    const dataDir = tempDir();
    let t = await startTestService({ dataDir });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices() });
    await t.service.projector!.caughtUp();
    const before = await t.ok("admin", DEVICES);
    await t.close();
    expect(readdirSync(join(dataDir, "read-models")).filter((f) => f.endsWith(".snapshot")).sort()).toEqual(
      ["arqs", "deployables", "device-profiles", "device-tree", "resource-providers"].map((n) => `${n}.snapshot`),
    );

    const applied = vi.spyOn(MemoryReadStore.prototype, "applyBatch");
    let logged = capturingLogger("info");
    t = await startTestService({ dataDir, log: logged.log });
    expect(await t.ok("admin", DEVICES)).toEqual(before);
    expect(applied).not.toHaveBeenCalled();
    expect(logged.said("read model loaded from its snapshot")).toHaveLength(5);
    expect(logged.said("rebuilding read models")).toEqual([]);
    // The binder and the invariant checker read on from their own snapshots too.
    expect(logged.said("state loaded from its snapshot; reading the log after it").map((l) => l.follower).sort()).toEqual(["binder", "invariant-checker"]);
    // Once serving, it takes the loaded keys out of the files' bytes in the background.
    await vi.waitFor(() => expect(logged.said("read models loaded from snapshots: every key taken out of the files' bytes, which are freed")).toHaveLength(1));
    expect(await t.ok("admin", DEVICES)).toEqual(before);
    await t.close();

    truncateSync(join(dataDir, "read-models", "device-tree.snapshot"), 50);
    logged = capturingLogger("info");
    t = await startTestService({ dataDir, log: logged.log });
    expect(await t.ok("admin", DEVICES)).toEqual(before);
    expect(logged.lines.filter((l) => /read-model snapshot is refused/.test(l.msg)).map((l) => l.projection)).toEqual(["device-tree"]);
    expect(applied.mock.calls.map(([p]) => p)).toContain("device-tree");
    await t.close();
  }, 60_000);

  it("a replaced log: the snapshots are not its models; they are logged, not served, and rebuilt from the new log", async () => {
    const dataDir = tempDir();
    let t = await startTestService({ dataDir });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices() });
    await t.close();
    rmSync(join(dataDir, "events"), { recursive: true });
    const logged = capturingLogger("info");
    t = await startTestService({ dataDir, log: logged.log });
    expect((await t.ok("admin", DEVICES)).devices.totalCount).toBe(0);
    expect(logged.lines.some((l) => /read model in the store is not this log's/.test(l.msg) && l.projection === "device-tree")).toBe(true);
    await t.close();
  }, 60_000);

  it("AUDIT_INDEX=memory: the audit index, which grows with the log, gets no snapshot; the other models do", async () => {
    const dataDir = tempDir();
    const t = await startTestService({ dataDir, env: { AUDIT_INDEX: "memory" } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices() });
    await t.close();
    const files = readdirSync(join(dataDir, "read-models"));
    expect(files).toContain("device-tree.snapshot");
    expect(files).not.toContain("audit.snapshot");
  });

  it("SNAPSHOT_INTERVAL_S=0: no snapshot is written, and the next start replays the log", async () => {
    const dataDir = tempDir();
    const t = await startTestService({ dataDir, env: { SNAPSHOT_INTERVAL_S: "0" } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices() });
    await t.close();
    expect(existsSync(join(dataDir, "read-models"))).toBe(false);
  });
});

describe("restarting against a live Redis", () => {
  it("finds the read models in Redis at the log's head: nothing is rebuilt or written, and the answers are the same", async () => {
    const redis = await startRedis();
    const dataDir = tempDir();
    const env = { REDIS_URL: redis.url };
    try {
      let t = await startTestService({ dataDir, env });
      await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
      await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices() });
      await t.service.projector!.caughtUp();
      const before = await t.ok("admin", DEVICES);
      await t.close();

      const applied = vi.spyOn(RedisReadStore.prototype, "applyBatch");
      const dropped = vi.spyOn(RedisReadStore.prototype, "drop");
      const logged = capturingLogger("info");
      t = await startTestService({ dataDir, env, log: logged.log });
      expect(await t.ok("admin", DEVICES)).toEqual(before);
      expect(logged.said("rebuilding read models")).toEqual([]);
      expect(dropped).not.toHaveBeenCalled();
      expect(applied).not.toHaveBeenCalled();
      // It goes on from there.
      await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-2", groups: [{ "resources:FPGA": "1" }] } });
      expect((await t.ok("admin", DEVICES)).deviceProfiles).toHaveLength(2);
      await t.close();
    } finally {
      await redis.stop();
    }
  }, 60_000);
});
