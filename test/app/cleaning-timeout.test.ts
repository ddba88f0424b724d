/**
 * CLEAN_TIMEOUT_S: the cleaning watchdog closes a clean no agent answered in time, so the device is
 * FAILED with a reason instead of CLEANING forever. The clock is the test's; the watchdog is swept
 * by hand once it has read the request.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { deviceLifecycle } from "../../src/domain/inventory/device-lifecycle.js";
import { CleaningWatchdog } from "../../src/reactors/cleaning/watchdog.js";
import { StateSnapshots } from "../../src/reactors/follower/state-snapshots.js";
import { ADMIN, fpga, hostState, setup } from "./support.js";

const HOST = "compute1";
const agent = { ...ADMIN, principal: "agent:compute1" };
const T0 = Date.parse(ADMIN.at);
const TIMEOUT_MS = 600_000;

/** A device on HOST with a clean in flight (requested at T0), and a watchdog that has read it. */
async function cleaning() {
  const t = setup();
  await t.app.reportHostInventory(agent, HOST, [fpga(HOST, "af", 4)]);
  const deviceUuid = [...(await hostState(t.store, HOST)).devices.keys()][0]!;
  let now = T0;
  const read: string[] = [];
  let waiting: { n: number; resolve: () => void } | undefined;
  const watchdog = new CleaningWatchdog({
    store: t.store,
    app: t.app,
    log: pino({ level: "silent" }),
    timeoutMs: TIMEOUT_MS,
    now: () => now,
    tickMs: 0,
    onRead: (type) => {
      read.push(type);
      if (waiting && read.length >= waiting.n) waiting.resolve();
    },
  });
  await watchdog.start();
  const hasRead = (n: number) => (read.length >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { n, resolve })));
  const request = (await t.app.requestDeviceCleaning(ADMIN, HOST, deviceUuid, "card reseated"))!;
  await hasRead(1);
  return { ...t, deviceUuid, request, watchdog, hasRead, setNow: (ms: number) => (now = ms) };
}

describe("a clean no agent answers", () => {
  it("is closed after CLEAN_TIMEOUT_S: the device is FAILED, saying no agent answered; not a moment before", async () => {
    const { app, store, deviceUuid, request, watchdog, setNow } = await cleaning();
    try {
      setNow(T0 + TIMEOUT_MS - 1);
      expect(await watchdog.sweep()).toBe(0);
      expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("CLEANING");
      setNow(T0 + TIMEOUT_MS);
      expect(await watchdog.sweep()).toBe(1);
      const device = (await hostState(store, HOST)).devices.get(deviceUuid)!;
      expect(deviceLifecycle(device)).toBe("FAILED");
      expect(device.cleaning.failed!.reason).toBe(`cleaning failed: no agent answered within 600 s (CLEAN_TIMEOUT_S): is the agent of ${HOST} running, with a driver that cleans this device?`);
      expect(await app.cleaningInFlight(HOST)).toEqual([]);
      // The agent's late report is refused and changes nothing.
      const late = { hostname: HOST, deviceUuid, requestId: request.requestId, ok: true, digest: "sha256:1f", command: ["x"], durationMs: 1 };
      await expect(app.reportCleaningResult(agent, late)).rejects.toMatchObject({ code: "CONFLICT" });
      expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("FAILED");
      expect(await watchdog.sweep()).toBe(0);
    } finally {
      await watchdog.stop();
    }
  });

  it("a clean the agent reported in time is left as it ended", async () => {
    const { app, store, deviceUuid, request, watchdog, hasRead, setNow } = await cleaning();
    try {
      await app.reportCleaningResult(agent, { hostname: HOST, deviceUuid, requestId: request.requestId, ok: true, digest: "sha256:1f", command: ["fake-clean"], durationMs: 5 });
      await hasRead(2);
      setNow(T0 + 10 * TIMEOUT_MS);
      expect(await watchdog.sweep()).toBe(0);
      expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("QUALIFYING");
    } finally {
      await watchdog.stop();
    }
  });

  it("a watchdog started after the request gives it the whole timeout from its start", async () => {
    const { store, app, deviceUuid, watchdog } = await cleaning();
    await watchdog.stop();
    const started = T0 + 2 * TIMEOUT_MS;
    let now = started;
    let seen!: () => void;
    const read = new Promise<void>((r) => (seen = r));
    const restarted = new CleaningWatchdog({ store, app, log: pino({ level: "silent" }), timeoutMs: TIMEOUT_MS, now: () => now, tickMs: 0, onRead: () => seen() });
    await restarted.start();
    try {
      await read;
      expect(await restarted.sweep()).toBe(0);
      now = started + TIMEOUT_MS;
      expect(await restarted.sweep()).toBe(1);
      expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("FAILED");
    } finally {
      await restarted.stop();
    }
  });

  it("kept across a restart: the open clean comes back from the snapshot, and the log is read only after its position", async () => {
    const { store, app, deviceUuid } = await cleaning();
    const dir = mkdtempSync(join(tmpdir(), "cyborg-es-cleaning-"));
    const log = pino({ level: "silent" });
    const snapshots = () => new StateSnapshots({ dir, events: store, log, intervalMs: 0 });
    try {
      const first = new CleaningWatchdog({ store, app, log, timeoutMs: TIMEOUT_MS, now: () => T0, tickMs: 0, snapshots: snapshots() });
      await first.start();
      await expect.poll(() => first.status().state).toBe("live");
      await first.stop();
      const kept = await store.headPosition();
      const reads: Array<bigint | undefined> = [];
      const readAll = store.readAll.bind(store);
      store.readAll = (o) => (o?.filter && reads.push(o.after), readAll(o));
      let now = T0 + TIMEOUT_MS;
      const second = new CleaningWatchdog({ store, app, log, timeoutMs: TIMEOUT_MS, now: () => now, tickMs: 0, snapshots: snapshots() });
      await second.start();
      try {
        await expect.poll(() => second.status().state).toBe("live");
        expect(reads.every((after) => after !== undefined && after >= kept!)).toBe(true);
        expect(await second.sweep()).toBe(0);
        now += TIMEOUT_MS;
        expect(await second.sweep()).toBe(1);
        expect(deviceLifecycle((await hostState(store, HOST)).devices.get(deviceUuid)!)).toBe("FAILED");
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
