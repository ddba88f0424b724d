/**
 * The Nova notifier over a memory log and the Nova stand-in: what it sends for which events, and
 * what it does with each of Nova's answers (cyborg-reference 2.3; known bug 4: no event is lost
 * or silently dropped).
 */
import { afterEach, describe, expect, it } from "vitest";
import { arqCreated, bindFailed, bindStarted, bound, unbound } from "../projections/support.js";
import { LEVEL, startNovaStandIn, type NovaStandIn } from "../support/nova.js";
import { acceptedOf, boundArq, failedArq, said, SLOW, startNotifier, uuid, WAIT, write, type Started } from "./support.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function standIn(): Promise<NovaStandIn> {
  const nova = await startNovaStandIn();
  cleanups.push(() => nova.stop());
  return nova;
}
async function notifierFor(nova: NovaStandIn, o: Parameters<typeof startNotifier>[1] = {}): Promise<Started> {
  const s = await startNotifier(nova, o);
  cleanups.push(() => s.notifier.stop());
  return s;
}

describe("what the Nova notifier sends", SLOW, () => {
  it("one accelerator-request-bound per resolved bind, the events of one instance in one request, with microversion 2.82 and the token", async () => {
    const nova = await standIn();
    const [i1, i2, a1, a2, a3, a4] = [uuid(), uuid(), uuid(), uuid(), uuid(), uuid()];
    const { es } = await notifierFor(nova);
    // One commit per instance, as a PATCH binds all of an instance's ARQs at once.
    await write(es, [...boundArq(a1, i1), ...boundArq(a2, i1)]);
    await write(es, failedArq(a3, i2));
    await expect.poll(() => acceptedOf(nova), WAIT).toEqual([`${i1} ${a1} completed`, `${i1} ${a2} completed`, `${i2} ${a3} failed`]);
    expect(nova.calls.map((c) => c.events.map((e) => e.tag))).toEqual([[a1, a2], [a3]]);
    expect(nova.calls[0]!.events[0]).toEqual({ name: "accelerator-request-bound", server_uuid: i1, tag: a1, status: "completed" });
    expect(nova.calls[0]!.headers).toMatchObject({
      "x-auth-token": nova.token,
      "x-openstack-nova-api-version": "2.82",
      "openstack-api-version": "compute 2.82",
      "content-type": "application/json",
    });

    // BOUND -> BIND_FAILED (its device was lost) is no bind: nothing is sent. Unbind and bind again is a new bind.
    await write(es, [bindFailed(a1, "device lost", i1), unbound(a1), bindStarted(a1, "h1", i2), bound(a1, { instance: i2 }), ...boundArq(a4, i2)]);
    await expect.poll(() => acceptedOf(nova).length, WAIT).toBe(5);
    expect(acceptedOf(nova).slice(3)).toEqual([`${i2} ${a1} completed`, `${i2} ${a4} completed`]);
  });

  it("learns from the ARQ's stream whether a failure after its checkpoint ended a bind that started before it", async () => {
    const nova = await standIn();
    const [i1, started, wasBound] = [uuid(), uuid(), uuid()];
    const first = await startNotifier(nova);
    await write(first.es, [...boundArq(wasBound, i1), arqCreated(started), bindStarted(started, "h1", i1)]);
    await expect.poll(() => acceptedOf(nova), WAIT).toEqual([`${i1} ${wasBound} completed`]);
    await first.notifier.caughtUp(WAIT.timeout);
    await first.notifier.stop();

    // While no notifier runs: the started bind times out, the bound ARQ loses its device.
    await write(first.es, [bindFailed(started, "not bound within BIND_TIMEOUT_S", i1), bindFailed(wasBound, "device lost", i1)]);
    const { notifier } = await notifierFor(nova, { es: first.es });
    await notifier.caughtUp(WAIT.timeout);
    expect(acceptedOf(nova)).toEqual([`${i1} ${wasBound} completed`, `${i1} ${started} failed`]);
  });

  it("on its first start, leaves binds resolved before NOVA_EVENT_RETRY_S as history", async () => {
    const nova = await standIn();
    const [i1, old, fresh] = [uuid(), uuid(), uuid()];
    const { MemoryEventStore } = await import("../../src/infra/eventstore/memory.js");
    const es = new MemoryEventStore();
    await write(es, boundArq(old, i1));
    await new Promise((r) => setTimeout(r, 50));
    const { notifier, lines } = await notifierFor(nova, { es, config: { NOVA_EVENT_RETRY_S: 0.01 } });
    await write(es, boundArq(fresh, i1));
    await notifier.caughtUp(WAIT.timeout);
    expect(acceptedOf(nova)).toEqual([`${i1} ${fresh} completed`]);
    expect(said(lines, LEVEL.info, /history, not sent/)[0]).toMatchObject({ binds: 1 });
  });
});

describe("Nova's answers", SLOW, () => {
  it("404 for an instance (per event, or for the whole request): dropped with a log line, the others go on", async () => {
    const nova = await standIn();
    const [gone, gone2, alive, a1, a2, a3] = [uuid(), uuid(), uuid(), uuid(), uuid(), uuid()];
    nova.gone.add(gone).add(gone2);
    const { es, notifier, lines } = await notifierFor(nova);
    await write(es, [...boundArq(a1, gone), ...boundArq(a2, alive)]);
    await notifier.caughtUp(WAIT.timeout);
    nova.legacyNotFound = true;
    await write(es, failedArq(a3, gone2));
    await notifier.caughtUp(WAIT.timeout);
    expect(acceptedOf(nova)).toEqual([`${alive} ${a2} completed`]);
    expect(nova.calls.map((c) => c.status).sort()).toEqual([200, 207, 404]);
    expect(said(lines, LEVEL.info, /does not exist \(404\): event dropped/).map((l) => [l.instance, l.arq])).toEqual([
      [gone, a1],
      [gone2, a3],
    ]);
    expect(notifier.status()).toMatchObject({ state: "live", dropped: 2, delivered: 1, heldEvents: 0 });
  });

  it("422 (the instance is not on a host yet): held and tried again until Nova takes it; other instances do not wait", async () => {
    const nova = await standIn();
    const [early, other, a1, a2] = [uuid(), uuid(), uuid(), uuid()];
    nova.noHost.add(early);
    const { es, notifier, lines } = await notifierFor(nova);
    await write(es, boundArq(a1, early));
    await write(es, boundArq(a2, other));
    await expect.poll(() => acceptedOf(nova), WAIT).toEqual([`${other} ${a2} completed`]);
    await expect.poll(() => nova.calls.filter((c) => c.codes[0] === 422).length, WAIT).toBeGreaterThan(1);
    expect(notifier.status()).toMatchObject({ heldEvents: 1, state: "live" });
    expect(said(lines, LEVEL.info, /not on a host yet \(422/)).toHaveLength(1);

    nova.noHost.delete(early); // Nova has put the instance on its host
    await expect.poll(() => acceptedOf(nova), WAIT).toEqual([`${other} ${a2} completed`, `${early} ${a1} completed`]);
    await expect.poll(() => said(lines, LEVEL.info, /took an event it had answered 422/).length, WAIT).toBe(1);
    await expect.poll(() => notifier.status().heldEvents, WAIT).toBe(0);
  });

  it("422 for longer than NOVA_EVENT_RETRY_S: dropped with a warning", async () => {
    const nova = await standIn();
    const [instance, arq] = [uuid(), uuid()];
    nova.noHost.add(instance);
    const { es, notifier, lines } = await notifierFor(nova, { config: { NOVA_EVENT_RETRY_S: 0.2 } });
    await write(es, boundArq(arq, instance));
    await expect.poll(() => said(lines, LEVEL.warn, /not on a host after NOVA_EVENT_RETRY_S: event dropped/).map((l) => l.arq), WAIT).toEqual([arq]);
    expect(notifier.status()).toMatchObject({ heldEvents: 0, dropped: 1, delivered: 0 });
    expect(acceptedOf(nova)).toEqual([]);
  });

  it("Nova down (refused connections, 5xx): the batch waits and is tried again; nothing is lost", async () => {
    const nova = await standIn();
    const [i1, i2, a1, a2] = [uuid(), uuid(), uuid(), uuid()];
    const { es, notifier } = await notifierFor(nova);
    nova.failWith(503);
    await write(es, boundArq(a1, i1));
    await expect.poll(() => notifier.status().state, WAIT).toBe("retrying");
    expect(notifier.status()).toMatchObject({ lagEvents: 2, error: expect.stringMatching(/^Nova at .* is unavailable: events for instance .*: 503/) });
    await nova.down();
    await write(es, failedArq(a2, i2));
    await expect.poll(() => notifier.status().error, WAIT).toMatch(/no answer \(ECONNREFUSED\)/);
    nova.failWith(null);
    await nova.up();
    await expect.poll(() => acceptedOf(nova), WAIT).toEqual([`${i1} ${a1} completed`, `${i2} ${a2} failed`]);
    await notifier.caughtUp(WAIT.timeout);
    expect(notifier.status()).toMatchObject({ state: "live", lagEvents: 0, retries: 0 });
  });

  it("401, 403, a wrong NOVA_URL: a configuration problem, tried again and logged as an error, never dropped", async () => {
    const nova = await standIn();
    const [i1, i2, a1, a2] = [uuid(), uuid(), uuid(), uuid()];
    const badToken = await notifierFor(nova, { config: { NOVA_TOKEN: "not-the-token" } });
    await write(badToken.es, boundArq(a1, i1));
    await expect.poll(() => said(badToken.lines, LEVEL.error, /Nova refuses the events/).length, WAIT).toBeGreaterThan(1);
    expect(said(badToken.lines, LEVEL.error, /Nova refuses/)[0]).toMatchObject({ instance: i1, status: 401, code: "NOVA_REFUSED" });
    expect(badToken.notifier.status().error).toMatch(/refused the events for instance .*: 401 The request you have made requires authentication. \(is NOVA_TOKEN a valid token\?\)/);
    await badToken.notifier.stop();

    const wrongPath = await notifierFor(nova, { config: { NOVA_URL: nova.url.replace(/\/v2\.1$/, "/compute") } });
    await write(wrongPath.es, boundArq(a2, i2));
    await expect.poll(() => wrongPath.notifier.status().error, WAIT).toMatch(/: 404 .*is NOVA_URL the compute endpoint/);
    expect(wrongPath.notifier.status()).toMatchObject({ dropped: 0 });
    await wrongPath.notifier.stop();

    nova.failWith(403);
    const { notifier, lines } = await notifierFor(nova, { es: badToken.es });
    await expect.poll(() => said(lines, LEVEL.error, /Nova refuses the events/).length, WAIT).toBeGreaterThan(0);
    expect(acceptedOf(nova)).toEqual([]);
    nova.failWith(null);
    await expect.poll(() => acceptedOf(nova), WAIT).toEqual([`${i1} ${a1} completed`]);
    await notifier.caughtUp(WAIT.timeout);
    expect(notifier.status()).toMatchObject({ dropped: 0, delivered: 1 });
  });

  it("restarts from its checkpoint in the log: sends what Nova had not answered, not what it had, and goes on trying a held event", async () => {
    const nova = await standIn();
    const [i1, i2, i3, a1, a2, a3] = [uuid(), uuid(), uuid(), uuid(), uuid(), uuid()];
    const first = await startNotifier(nova);
    await write(first.es, boundArq(a1, i1));
    await expect.poll(() => acceptedOf(nova), WAIT).toEqual([`${i1} ${a1} completed`]);
    nova.noHost.add(i3);
    await write(first.es, boundArq(a3, i3));
    await expect.poll(() => first.notifier.status().heldEvents, WAIT).toBe(1);
    nova.failWith(500);
    await write(first.es, boundArq(a2, i2));
    await expect.poll(() => first.notifier.status().state, WAIT).toBe("retrying");
    await first.notifier.stop();

    nova.failWith(null);
    nova.noHost.clear();
    const { notifier, lines } = await notifierFor(nova, { es: first.es });
    await notifier.caughtUp(WAIT.timeout);
    await expect.poll(() => acceptedOf(nova).sort(), WAIT).toEqual([`${i1} ${a1} completed`, `${i2} ${a2} completed`, `${i3} ${a3} completed`].sort());
    // a3 came back from the saved held events, not from the log again.
    await expect.poll(() => said(lines, LEVEL.info, /took an event it had answered 422/).map((l) => l.arq), WAIT).toEqual([a3]);
  });
});
