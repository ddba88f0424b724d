/**
 * os-acc's initialize against a host whose agent stopped reporting: AgentUnavailable at once, with
 * the last report and the period in the message. The service expects a report every 0.2 s here,
 * so a host is stale 0.2 s after its report.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { AgentUnavailable, OsAcc } from "../../src/clients/osacc/index.js";
import { createLogger } from "../../src/infra/logger.js";
import { fixtureEnv } from "../agent/drivers/fixture-env.js";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";

let t: TestService;
let acc: OsAcc;

beforeAll(async () => {
  t = await startTestService({ env: { AGENT_REPORT_INTERVAL_S: "0.2", AGENT_STALE_AFTER_PERIODS: "1", AGENT_GONE_AFTER_PERIODS: "10000" } });
  acc = new OsAcc({ url: t.url, token: TOKENS.service.token, hostname: "compute1" });
});
afterAll(async () => {
  await acc?.close();
  await t?.close();
});

describe("os-acc initialize and agent liveness", () => {
  it("answers AGENT_UNAVAILABLE at once for a host whose agent stopped reporting, saying when it last reported", async () => {
    await reportOnce({ client: { url: t.url, token: TOKENS.agent.token }, hostname: "compute1", drivers: ["fake"], env: fixtureEnv("no-accelerators", { hostname: "compute1" }), intervalMs: 200, log: createLogger("silent"), retries: 0, lastGood: new Map() });
    const status = async () => (await t.ok("service", `{ hostStatus(hostname: "compute1") { reported liveness lastReportAt notReadyReason } }`)).hostStatus;
    await expect.poll(async () => (await status()).liveness, { timeout: 10_000 }).toBe("STALE");
    const { lastReportAt, notReadyReason } = await status();
    expect(lastReportAt).toEqual(expect.any(String));
    expect(notReadyReason).toContain(`the agent of host compute1 is stale: its last report was at ${lastReportAt}`);
    // The deadline is far away: the refusal comes from the host's state, not from waiting.
    const refused = await acc.initialize("compute1", { timeoutMs: 600_000, pollMs: 50 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AgentUnavailable);
    expect(refused).toMatchObject({ code: "AGENT_UNAVAILABLE", message: expect.stringContaining("its agent reports every 0.2 s") });
    expect((refused as Error).message).not.toContain("still so after");
  });

  it("hostStatuses answers for several hosts in the order named; a host never heard of has no last report", async () => {
    const { hostStatuses } = await t.ok("service", `{ hostStatuses(hostnames: ["nowhere", "compute1"]) { hostname reported liveness lastReportAt } }`);
    expect(hostStatuses).toEqual([
      { hostname: "nowhere", reported: false, liveness: "STALE", lastReportAt: null },
      { hostname: "compute1", reported: true, liveness: "STALE", lastReportAt: expect.any(String) },
    ]);
  });
});
