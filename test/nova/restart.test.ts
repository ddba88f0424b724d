/**
 * The notifier's checkpoint is in the event log: a restart of the service delivers the events Nova
 * had not taken, and does not send again those it had; in the embedded mode (read models in
 * memory, lost at every restart) and with Redis read models flushed while the service was down.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../support/redis.js";
import { startNovaStandIn, type NovaStandIn } from "../support/nova.js";
import { novaFollower, requestsFor, restBind, setUpHost, SLOW, startServiceFor, WAIT } from "./support.js";

for (const mode of ["embedded", "redis"] as const) {
  describe(`a restart of the service (${mode})`, SLOW, () => {
    let nova: NovaStandIn;
    let redis: TestRedis | undefined;
    let dataDir: string;
    beforeAll(async () => {
      nova = await startNovaStandIn();
      if (mode === "redis") redis = await startRedis();
      dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-nova-"));
    }, 60_000);
    afterAll(async () => {
      await nova?.stop();
      await redis?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const start = () => startServiceFor(nova, { dataDir, env: redis ? { REDIS_URL: redis.url } : {} });

    it("delivers the events Nova had not taken before the restart, and not again those it had", async () => {
      const first = await start();
      const rp = await setUpHost(first);
      const delivered = randomUUID();
      const [a] = await restBind(first, rp, "one", delivered);
      await expect.poll(() => requestsFor(nova, delivered), WAIT).toEqual([[`${a} completed`]]);

      nova.failWith(503);
      const pending = [randomUUID(), randomUUID()];
      const arqs = [await restBind(first, rp, "two", pending[0]!), await restBind(first, rp, "one", pending[1]!)];
      await expect.poll(async () => (await novaFollower(first))?.state, WAIT).toBe("retrying");
      await first.close();
      if (redis) await redis.client().flushall();

      nova.failWith(null);
      const second = await start();
      try {
        for (const [i, instance] of pending.entries()) {
          await expect.poll(() => requestsFor(nova, instance).at(-1), WAIT).toEqual(arqs[i]!.map((u) => `${u} completed`));
        }
        await expect.poll(async () => (await novaFollower(second))?.lagEvents, WAIT).toBe(0);
        expect(requestsFor(nova, delivered)).toEqual([[`${a} completed`]]);
      } finally {
        await second.close();
      }
    });
  });
}
