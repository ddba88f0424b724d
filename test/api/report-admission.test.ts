/**
 * Whole host reports are admitted a few at a time (REPORT_MAX_IN_FLIGHT, REPORT_MAX_QUEUED): past
 * that, UNAVAILABLE with HTTP 503 and a Retry-After, nothing written; confirmations are not held.
 * And after a restart, agents whose hosts did not change are confirmed by digest from the log.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportDigest } from "../../src/domain/inventory/digest.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { FAKE_HOST_DEVICES, TOKENS, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

const post = (t: TestService, hostname: string) =>
  fetch(t.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKENS.admin.token}` },
    body: JSON.stringify({ query: op.REPORT, variables: { hostname, devices: FAKE_HOST_DEVICES(2, hostname) } }),
  });

type Answer = { data: { reportHostInventory: { hostname: string; added: number } } };

/** An event store whose appends to one host's stream wait until opened: that host's report stays in flight. */
function holdingHost(store: MemoryEventStore, hostname: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => (reached = resolve));
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === "append") {
        return async (name: string, ...rest: unknown[]) => {
          if (name === stream.host(hostname)) {
            reached();
            await opened;
          }
          return (target.append as (...a: unknown[]) => unknown)(name, ...rest);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, waiting, open };
}

describe("admission of host reports", () => {
  let t: TestService;
  afterAll(() => t?.close());

  it("takes REPORT_MAX_IN_FLIGHT at once, queues REPORT_MAX_QUEUED, and refuses the next with 503 and Retry-After, writing nothing of it", async () => {
    const hold = holdingHost(new MemoryEventStore(), "host-a");
    t = await startTestService({ env: { REPORT_MAX_IN_FLIGHT: "1", REPORT_MAX_QUEUED: "1", REPORT_RETRY_AFTER_S: "2" }, overrides: { store: hold.store } });
    // host-a's report is taken and held at its append; host-b's waits its turn; host-c's is refused.
    const first = post(t, "host-a");
    await hold.waiting;
    const second = post(t, "host-b");
    const metricsText = async () => (await fetch(new URL("/metrics", t.url), { headers: { authorization: `Bearer ${TOKENS.admin.token}` } })).text();
    await expect.poll(metricsText).toMatch(/cyborg_agent_reports_in_progress\{state="queued"\} 1/);
    expect(await metricsText()).toMatch(/cyborg_agent_reports_in_progress\{state="taken"\} 1/);
    const refused = await post(t, "host-c");
    expect(refused.status).toBe(503);
    const body = (await refused.json()) as { errors: Array<{ message: string; extensions: { code: string; retryAfterSeconds: number } }> };
    expect(body.errors[0]!.extensions.code).toBe("UNAVAILABLE");
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(2);
    expect(wait).toBeLessThanOrEqual(4);
    expect(body.errors[0]!.extensions.retryAfterSeconds).toBe(wait);
    expect(body.errors[0]!.message).toMatch(/REPORT_MAX_IN_FLIGHT.*send this report again in \d+ s; nothing of it was written/);
    expect(await t.service.store.readStream(stream.host("host-c"))).toEqual([]);
    expect(await metricsText()).toMatch(/cyborg_agent_reports_total\{result="busy"\} [1-9]/);
    // A confirmation is never held behind reports.
    const confirm = await t.gql("admin", op.CONFIRM, { hostname: "host-c", digest: reportDigest(FAKE_HOST_DEVICES(2, "host-c")) });
    expect(confirm).toEqual({ data: { confirmHostInventory: null } });
    hold.open();
    expect((await first).status).toBe(200);
    expect(((await (await second).json()) as Answer).data.reportHostInventory).toMatchObject({ hostname: "host-b", added: 1 });
    expect(((await (await post(t, "host-c")).json()) as Answer).data.reportHostInventory).toMatchObject({ hostname: "host-c", added: 1 });
  });
});

describe("confirmations after a restart", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-confirm-restart-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("confirms an unchanged host's digest from the log, with no full report since the restart", async () => {
    const devices = FAKE_HOST_DEVICES(2);
    const digest = reportDigest(devices);
    const before = await startTestService({ dataDir });
    const report = (await before.ok("agent", op.REPORT, { hostname: "compute1", devices })).reportHostInventory;
    await before.close();
    const after = await startTestService({ dataDir });
    try {
      const head = await after.service.store.headPosition();
      const confirmed = (await after.ok("agent", op.CONFIRM, { hostname: "compute1", digest })).confirmHostInventory;
      expect(confirmed).toEqual({ hostname: "compute1", added: 0, updated: 0, removed: 0, unchanged: 1, revision: report.revision, digest });
      expect(await after.service.store.headPosition()).toBe(head);
    } finally {
      await after.close();
    }
  });
});
