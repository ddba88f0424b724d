/**
 * READ_MODELS_ON_DISK keeps the named read models in LMDB beside the log (DATA_DIR/disk-models)
 * instead of the process's heap: the service answers from them as from memory, they survive a
 * restart without a snapshot or a replay, and a name that is not a read model, or the setting
 * beside REDIS_URL, is refused at start.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/infra/config.js";
import { LmdbReadStore } from "../../src/infra/readstore/lmdb.js";
import { readModelsOf } from "../../src/service/adapters.js";
import { hostDevices } from "../audit/scenario.js";
import { startTestService } from "./harness.js";
import * as op from "./operations.js";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "cyborg-es-models-on-disk-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ON_DISK = "device-tree,deployables,resource-providers";
const DEVICES = `{ devices(filter: { hostname: "compute1" }) { totalCount nodes { uuid type model } } }`;

describe("READ_MODELS_ON_DISK", () => {
  it("keeps the named models on disk: answered as from memory, and after a restart without a snapshot or a replay of them", async () => {
    const dataDir = tempDir();
    const start = () => startTestService({ dataDir, env: { READ_MODELS_ON_DISK: ON_DISK } });
    let t = await start();
    expect(readModelsOf(t.service.readStore)).toEqual({ "*": "memory", audit: "lmdb", "device-tree": "lmdb", deployables: "lmdb", "resource-providers": "lmdb" });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices() });
    await t.service.projector!.caughtUp();
    const before = (await t.ok("admin", DEVICES)).devices;
    expect(before.totalCount).toBeGreaterThan(0);
    await t.close();
    expect(existsSync(join(dataDir, "disk-models"))).toBe(true);
    // The models kept in memory have their snapshots; those on disk have none.
    const snapshots = readdirSync(join(dataDir, "read-models")).filter((f) => f.endsWith(".snapshot"));
    expect(snapshots).toContain("arqs.snapshot");
    expect(snapshots.filter((f) => ON_DISK.split(",").includes(f.replace(".snapshot", "")))).toEqual([]);

    // Restarted: the models on disk are at the log's head; nothing is written to them, nothing dropped.
    const applied = vi.spyOn(LmdbReadStore.prototype, "applyBatch");
    const dropped = vi.spyOn(LmdbReadStore.prototype, "drop");
    t = await start();
    try {
      expect((await t.ok("admin", DEVICES)).devices).toEqual(before);
      expect(dropped).not.toHaveBeenCalled();
      expect(applied.mock.calls.filter(([p]) => ON_DISK.split(",").includes(p))).toEqual([]);
      // And they go on from there: a device changed is read back changed.
      await t.ok("agent", op.REPORT, { hostname: "compute1", devices: hostDevices({ modelA: "other" }) });
      await t.service.projector!.caughtUp();
      const models = (await t.ok("admin", DEVICES)).devices.nodes.map((d: { model: string }) => d.model);
      expect(models.sort()).toEqual(["fake-gpu", "other"]);
    } finally {
      await t.close();
    }
  }, 60_000);

  it("refuses a name that is not a read model, saying which are", async () => {
    await expect(startTestService({ dataDir: tempDir(), env: { READ_MODELS_ON_DISK: "device-tree,devices" } })).rejects.toThrow(
      /READ_MODELS_ON_DISK="device-tree,devices": "devices" is not a read model; the read models are .*device-tree.*\(the audit index has AUDIT_INDEX\)/,
    );
  });

  it("is refused beside REDIS_URL (every model is in Redis there), and for a list that is not names", () => {
    expect(() => loadConfig({ READ_MODELS_ON_DISK: "device-tree", REDIS_URL: "redis://127.0.0.1:6379" })).toThrow(/READ_MODELS_ON_DISK="device-tree": with REDIS_URL every read model is in Redis/);
    expect(() => loadConfig({ READ_MODELS_ON_DISK: "device-tree;arqs" })).toThrow(/READ_MODELS_ON_DISK="device-tree;arqs": read-model names separated by commas/);
    expect(loadConfig({ READ_MODELS_ON_DISK: "arqs,arqs" }).READ_MODELS_ON_DISK).toEqual(["arqs"]);
    expect(loadConfig({}).READ_MODELS_ON_DISK).toEqual([]);
  });
});
