/**
 * Cleaning before reuse end to end: the service in this process, the real agent spawned as a user
 * runs it (fake driver), a profile with accel:clean_after_use=true. The last holder's unbind asks
 * the host's agent to clean the device; the agent's clean step runs and its report makes the
 * device QUALIFYING, and the next healthy report offers it again. A clean that fails leaves the
 * device FAILED with the driver's message, and `cyborg-es device show` says so.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import { CREATE_PROFILE, UNBIND } from "../api/operations.js";
import type { AgentProcess } from "./support/agent-process.js";
import { bind, fpgaE2e, history } from "./support/fpga-e2e.js";

const run = promisify(execFile);
const kit = fpgaE2e(["clean-ok", "clean-fail"]);
const DEVICE = `query { devices { nodes { uuid hostname lifecycleState
  cleaning { inFlight { requestId } qualifyingSince failure { reason } last { outcome digest command durationMs reason } } } } }`;
const FAILURE = "scrub failed: bank 3 did not clear";

let t: TestService;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "cyborg-es-e2e-clean-"));
  await kit.build();
  t = await startTestService({ overrides: { tokens: kit.tokens() }, dataDir });
  await t.ok("admin", CREATE_PROFILE, { input: { name: "clean-after-use", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required", "accel:clean_after_use": "true" }] } });
});
afterAll(async () => {
  await kit.stop();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function device(host: string) {
  const { devices } = await t.ok("admin", DEVICE, {});
  return (devices.nodes as Array<Record<string, any>>).find((d) => d.hostname === host)!;
}

/** Binds one ARQ on the host's fake device and unbinds it: the last holder leaves. */
async function useOnce(host: string): Promise<void> {
  const b = await bind(t, host, "clean-after-use");
  expect(await b.bound()).toMatchObject({ status: "COMPLETED" });
  await t.ok("service", UNBIND, { uuids: [b.arq] });
}

/** The first line `match` accepts that the agent logged after `line`. */
const after = (agent: AgentProcess, line: Record<string, unknown>, match: (l: Record<string, unknown>) => boolean, what: string) =>
  agent.waitFor((l) => agent.lines.indexOf(l) > agent.lines.indexOf(line) && match(l), what);
const isReport = (l: Record<string, unknown>) => l.msg === "inventory changed" || l.msg === "inventory unchanged";

describe("cleaning before reuse, with the agent", () => {
  it("the last holder leaves: the agent cleans, the device qualifies on its next report and is offered again", async () => {
    const agent = await kit.agentFor(t, "clean-ok", ["--fake-clean-delay", "200"]);
    await useOnce("clean-ok");
    const cleaned = await agent.waitFor((l) => l.msg === "cleaned", "that it cleaned the device");
    expect(cleaned.command).toEqual(["fake-clean", "--device", "0000:0c:00.0"]);
    await after(agent, cleaned, isReport, "a report after the clean");
    const d = await device("clean-ok");
    expect(d.lifecycleState).toBe("AVAILABLE");
    expect(d.cleaning).toMatchObject({ inFlight: null, qualifyingSince: null, failure: null, last: { outcome: "cleaned", digest: cleaned.digest, command: cleaned.command } });
    expect(d.cleaning.last.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(d.cleaning.last.durationMs).toBeGreaterThanOrEqual(200);
    // The host's history: requested at the release, cleaned by the agent, qualified by its report.
    const loop = (await history(t, "clean-ok")).map((e) => e.type).filter((type) => ["DeviceCleaningRequested", "DeviceCleaned", "DeviceQualified"].includes(type));
    expect(loop).toEqual(["DeviceCleaningRequested", "DeviceCleaned", "DeviceQualified"]);
    // Offered again: the next tenant binds.
    const next = await bind(t, "clean-ok", "clean-after-use");
    expect(await next.bound()).toMatchObject({ status: "COMPLETED" });
  });

  it("a clean that fails leaves the device FAILED with the driver's message; binds are refused and `device show` tells why", async () => {
    const agent = await kit.agentFor(t, "clean-fail", ["--fake-clean-fail", FAILURE]);
    await useOnce("clean-fail");
    const failed = await agent.waitFor((l) => l.msg === "cleaning failed", "that the clean failed");
    expect(failed.reason).toBe(FAILURE);
    // The agent reports before it lets the host lock go: a report after the line follows the result.
    await after(agent, failed, isReport, "a report after the failed clean");
    const d = await device("clean-fail");
    expect(d.lifecycleState).toBe("FAILED");
    expect(d.cleaning).toMatchObject({ inFlight: null, failure: { reason: `cleaning failed: ${FAILURE}` }, last: { outcome: "failed", reason: FAILURE } });
    const refused = await bind(t, "clean-fail", "clean-after-use");
    expect(await refused.bound()).toMatchObject({ status: "FAILED", reason: expect.stringContaining(`is FAILED (cleaning failed: ${FAILURE})`) });
    const cli = kit.cli;
    const { stdout } = await run(cli.argv[0]!, [cli.argv[1]!, "device", "show", d.uuid, "--url", t.url, "--token", TOKENS.admin.token]);
    const shown = JSON.parse(stdout) as Record<string, any>;
    expect(shown).toMatchObject({ uuid: d.uuid, lifecycleState: "FAILED", cleaning: { failure: { reason: `cleaning failed: ${FAILURE}` }, last: { outcome: "failed", reason: FAILURE, command: ["fake-clean", "--device", "0000:0c:00.0"] } } });
  });
});
