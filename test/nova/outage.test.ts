/**
 * Nova goes away while binds go on, then comes back: binds never wait for it (REST answers 202,
 * GraphQL answers BOUND and its subscribers are told), /readyz shows the notifier retrying and its
 * lag, and once Nova answers again every bind's event reaches it: nothing lost.
 */
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { collect } from "../api/harness.js";
import * as op from "../api/operations.js";
import { restClient } from "../rest/support.js";
import { graphqlBind, novaFollower, requestsFor, restBind, serviceWithNova, SLOW, WAIT } from "./support.js";

const ctx = serviceWithNova(32);

it("binds go on while Nova is down, and every bind's event reaches Nova when it is back", SLOW, async () => {
  const { t, nova, rp } = ctx;
  await nova.down();
  const binds: Array<{ instance: string; arqs: string[] }> = [];
  const rest = restClient(t.url);
  for (let i = 0; i < 3; i++) {
    const instance = randomUUID();
    const arqs = await restBind(t, rp, "two", instance);
    const shown = (await rest.call("service", "GET", `/v2/accelerator_requests?instance=${instance}&bind_state=resolved`)).json.arqs as Array<{ state: string }>;
    expect(shown.map((a) => a.state)).toEqual(["Bound", "Bound"]);
    binds.push({ instance, arqs });
  }
  await expect.poll(async () => (await novaFollower(t))?.state, WAIT).toBe("retrying");
  for (let i = 0; i < 3; i++) {
    const instance = randomUUID();
    const sub = collect<op.BoundEvent>(t.ws("service"), op.BOUND, { instance });
    await new Promise((r) => setTimeout(r, 50));
    const arqs = await graphqlBind(t, rp, i === 2 ? "one" : "two", instance);
    expect(arqs.every((a) => a.state === "BOUND")).toBe(true);
    expect((await sub.next(arqs.length)).map((e) => e.acceleratorRequestBound.status)).toEqual(arqs.map(() => "COMPLETED"));
    sub.unsubscribe();
    binds.push({ instance, arqs: arqs.map((a) => a.uuid) });
  }
  const waiting = (await novaFollower(t))!;
  expect(waiting).toMatchObject({ state: "retrying", error: expect.stringMatching(/is unavailable: .*no answer/) });
  expect(waiting.lagEvents).toBeGreaterThan(0);
  expect(nova.accepted()).toEqual([]);

  nova.failWith(500); // listening again, but failing
  await nova.up();
  await expect.poll(async () => (await novaFollower(t))?.error, WAIT).toMatch(/is unavailable: .*: 500/);
  nova.failWith(null);
  for (const b of binds) await expect.poll(() => requestsFor(nova, b.instance).at(-1), WAIT).toEqual(b.arqs.map((a) => `${a} completed`));
  await expect.poll(() => novaFollower(t), WAIT).toMatchObject({ state: "live", lagEvents: 0, retries: 0, dropped: 0 });
});
