/**
 * A read store that loses its data (Redis FLUSHALL; the embedded store's equivalent) is never
 * read as if it were empty: until the projector has rebuilt the models, queries over HTTP,
 * WebSocket and REST get UNAVAILABLE (503 with Retry-After) and /readyz says not ready; then the
 * answers are whole again. Readers run throughout the loss; every answer is checked.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { judgeGraphql, judgeRest, type GraphqlBody, type Verdict } from "../../bench/lib/reliability/read-store-answers.js";
import type { SplitReadStore } from "../../src/infra/readstore/split.js";
import { HeldWrites } from "../support/held-writes.js";
import { startRedis, type TestRedis } from "../support/redis.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "./harness.js";
import * as op from "./operations.js";

const QUERY = `{ deviceProfiles { name } devices { totalCount } }`;
const HOSTS = 3;
const PROFILES = ["loss-a", "loss-b"];

const samples: string[] = [];
const wrong = (what: string): Verdict => {
  if (samples.length < 5) samples.push(what);
  return "wrong";
};

for (const mode of ["embedded", "redis"] as const) {
  describe(`read store loss (${mode})`, () => {
    let t: TestService;
    let redis: TestRedis | undefined;
    let flush: () => Promise<void>;
    // While closed, the projector cannot write: a flushed store stays lost until the test opens it.
    const projectorWrites = new HeldWrites();
    const overrides = { wrapProjectorStore: projectorWrites.wrap.bind(projectorWrites) };

    beforeAll(async () => {
      if (mode === "redis") {
        redis = await startRedis();
        t = await startTestService({ env: { REDIS_URL: redis.url }, overrides });
        const client = redis.client();
        flush = async () => void (await client.flushall());
      } else {
        t = await startTestService({ overrides });
        // The API's store is a guarded view of the embedded stores (the models in memory, the audit
        // index on disk): flushing it flushes both.
        flush = async () => (t.service.readStore as SplitReadStore).flushAll();
      }
      for (const name of PROFILES) await t.ok("admin", op.CREATE_PROFILE, { input: { name, groups: [{ "resources:FPGA": "1" }] } });
      for (let h = 0; h < HOSTS; h++) await t.ok("admin", op.REPORT, { hostname: `loss${h}`, devices: FAKE_HOST_DEVICES(2, `loss${h}`) /* one device with two functions */ });
    }, 60_000);
    afterAll(async () => {
      await t?.close();
      await redis?.stop();
    });

    /** One GraphQL answer over HTTP, judged. */
    const graphql = async (): Promise<Verdict> => {
      const res = await fetch(t.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.admin.token}` },
        body: JSON.stringify({ query: QUERY }),
      });
      const body = (await res.json()) as GraphqlBody;
      const isWhole = (data: any) => data.deviceProfiles.map((p: { name: string }) => p.name).sort().join() === PROFILES.join() && data.devices.totalCount === HOSTS;
      const v = judgeGraphql(res.status, res.headers, body, isWhole);
      return v === "wrong" ? wrong(`${res.status} ${JSON.stringify(body)}`) : v;
    };

    /** One REST answer (Cyborg's device profile list), judged. */
    const rest = async (): Promise<Verdict> => {
      const res = await fetch(new URL("/v2/device_profiles", t.url), { headers: { "x-auth-token": TOKENS.admin.token } });
      const body = (await res.json()) as { device_profiles?: Array<{ name: string }>; error_message?: string };
      const v = judgeRest(res.status, res.headers, body, (b) => b.device_profiles.map((p: { name: string }) => p.name).sort().join() === PROFILES.join());
      return v === "wrong" ? wrong(`REST ${res.status} ${JSON.stringify(body)}`) : v;
    };

    it("answers whole or UNAVAILABLE, never empty, while the models are rebuilt; then whole again", async () => {
      const verdicts: Record<Verdict, number> = { whole: 0, unavailable: 0, wrong: 0 };
      let flushed = false;
      let wholeAfterFlush = 0;
      const deadline = Date.now() + 60_000;
      const reader = async (ask: () => Promise<Verdict>) => {
        while (Date.now() < deadline && wholeAfterFlush < 40) {
          const v = await ask();
          verdicts[v]++;
          if (flushed && v === "whole") wholeAfterFlush++;
        }
      };
      const readers = [reader(graphql), reader(graphql), reader(rest)];
      await vi.waitFor(() => expect(verdicts.whole, "whole answers before the loss").toBeGreaterThan(0), { timeout: 30_000, interval: 10 });
      projectorWrites.close();
      await flush();
      flushed = true;
      try {
        // Lost, and the projector cannot have rebuilt: not ready, and the readers are told so.
        const readyz = await fetch(new URL("/readyz", t.url));
        expect({ status: readyz.status, body: await readyz.json() }).toMatchObject({ status: 503, body: { status: "not ready" } });
        await projectorWrites.held;
        await vi.waitFor(() => expect(verdicts.unavailable, "UNAVAILABLE answers during the loss").toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 10 });
      } finally {
        projectorWrites.open();
      }
      await Promise.all(readers);
      expect(verdicts.wrong, `wrong answers: ${samples.join("\n")}`).toBe(0);
      expect(wholeAfterFlush).toBeGreaterThanOrEqual(40);
      const after = await fetch(new URL("/readyz", t.url));
      expect(after.status).toBe(200);
    }, 90_000);

    it("a query over WebSocket during the loss gets UNAVAILABLE with its code", async () => {
      const client = t.ws("admin");
      const run = () =>
        new Promise<{ data?: unknown; errors?: Array<{ extensions?: { code?: string } }> }>((resolve, reject) => {
          let result: { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> } = {};
          client.subscribe({ query: QUERY }, { next: (v) => (result = v as typeof result), error: reject, complete: () => resolve(result) });
        });
      expect((await run()).errors).toBeUndefined();
      projectorWrites.close();
      await flush();
      let during;
      try {
        during = await run();
      } finally {
        projectorWrites.open();
      }
      // The formatter's code, never raw text.
      expect(during.errors?.map((e) => e.extensions?.code)).toEqual(expect.arrayContaining(["UNAVAILABLE"]));
      await expect.poll(async () => (await run()).errors, { timeout: 30_000 }).toBeUndefined();
    }, 60_000);
  });
}
