/**
 * The console's device page in Chromium: a device bound to an instance is tainted NoExecute; the
 * page shows its state in words, the taint (effect, who, why, when), the holder with its eviction
 * notice, and the loop's timeline; then the holder leaves, the clean the profile asks for fails,
 * and the page shows the device failed with the clean's reason, the timeline each step.
 */
import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { launchBrowser, screenshot, signedInConsole } from "../support/browser.js";

const WAIT = { timeout: 15_000 };
const TAINT = `mutation($uuid: ID!, $taint: TaintInput!) { taintDevice(uuid: $uuid, taint: $taint) { uuid lifecycleState } }`;
const EVICTED = `subscription($arq: ID) { acceleratorRequestEvicted(arqUuid: $arq) { arqUuid } }`;
const AGENT_REQUESTS = `subscription($hostname: String!) { agentRequests(hostname: $hostname) { kind requestId } }`;
const REPORT_CLEANING = `mutation($input: CleaningResultInput!) { reportCleaningResult(input: $input) { recorded } }`;
const REASON = "XID 79: GPU has fallen off the bus";

describe("the console's device page", () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let violations: string[];
  let origin: string;
  let deviceUuid: string;
  let arqUuid: string;
  const instanceUuid = randomUUID();

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "clean", groups: [{ "resources:FPGA": "1", "accel:clean_after_use": "true" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
    deviceUuid = (await t.ok("admin", op.DEVICES)).devices.nodes[0].uuid;
    arqUuid = (await t.ok("service", op.CREATE_ARQS, { name: "clean" })).createAcceleratorRequests[0].uuid;
    await t.ok("service", op.BIND, { bindings: [{ arqUuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid }] });
    await t.ok("admin", TAINT, { uuid: deviceUuid, taint: { key: "cyborg.openstack.org/health", effect: "NoExecute", reason: REASON } });
    // The eviction follower gives the notice after the taint's commit; the subscription sends it then (or at once, if given already).
    const evicted = collect<{ acceleratorRequestEvicted: { arqUuid: string } }>(t.ws("service"), EVICTED, { arq: arqUuid });
    expect((await evicted.next(1))[0]!.acceleratorRequestEvicted.arqUuid).toBe(arqUuid);
    evicted.unsubscribe();

    browser = await launchBrowser();
    origin = new URL(t.url).origin;
    ({ page, violations } = await signedInConsole(browser, origin, TOKENS.admin.token));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const step = (name: string) => page.getByRole("list", { name: "Timeline" }).locator(`li[data-step="${name}"]`);

  it("is reached from the host's page, and shows the state, the taint, the holder and its notice", async () => {
    await page.getByRole("link", { name: "Hosts", exact: true }).click();
    await page.getByRole("link", { name: "compute1" }).click();
    await page.getByRole("link", { name: /^Details of the device at 0000:0c:00.0$/ }).click();
    await page.getByRole("heading", { name: "Device FPGA 0xABCD miss model info" }).waitFor(WAIT);
    expect(await page.getByTestId("device-state").textContent()).toBe("DRAINING");
    expect(await page.getByTestId("state-words").textContent()).toMatch(/asked the ARQs holding it to move/);

    const taint = page.getByRole("table", { name: "Taints" }).locator("tbody tr");
    expect(await taint.count()).toBe(1);
    const cells = await taint.locator("td").allTextContents();
    expect(cells.slice(0, 4)).toEqual(["NoExecute: holders must move", "cyborg.openstack.org/health", "admin", REASON]);
    expect(cells[4]).not.toBe("unknown");

    const holder = page.getByRole("table", { name: "Holders" }).locator(`tr[data-arq="${arqUuid}"]`);
    expect(await holder.locator("td").nth(1).textContent()).toBe(instanceUuid);
    expect(await holder.getByTestId("eviction").textContent()).toMatch(new RegExp(`^by .+\\(${REASON}; asked .+\\)$`));

    await step("Eviction requested").waitFor(WAIT);
    expect(await step("Tainted").textContent()).toContain(`NoExecute (holders must move), cyborg.openstack.org/health, by admin: ${REASON}`);
    expect(await step("Eviction requested").textContent()).toContain(`ARQ ${arqUuid} (instance ${instanceUuid}) asked to move by`);
    expect(await step("Taken").count()).toBe(1);
    expect(await step("Drained").count()).toBe(0);
    await screenshot(page, "device-draining");
  });

  it("follows the holder leaving and a failed clean: the device failed, the clean's reason shown, each step on the timeline", async () => {
    const requests = collect<{ agentRequests: { kind: string; requestId: string } }>(t.ws("agent"), AGENT_REQUESTS, { hostname: "compute1" });
    await t.ok("service", op.DELETE_ARQS, { uuids: [arqUuid] });
    const [request] = await requests.next(1);
    requests.unsubscribe();
    expect(request!.agentRequests.kind).toBe("CLEAN");
    const input = { hostname: "compute1", deviceUuid, requestId: request!.agentRequests.requestId, ok: false, reason: "fpgaconf: exit code 3 (bitstream rejected)" };
    await t.ok("agent", REPORT_CLEANING, { input });

    await page.getByTestId("device-state").filter({ hasText: "FAILED" }).waitFor(WAIT);
    expect(await page.getByTestId("failure").textContent()).toContain("cleaning failed: fpgaconf: exit code 3 (bitstream rejected)");
    expect(await page.getByText("No ARQ holds it.").count()).toBe(1);
    await step("Failed").waitFor(WAIT);
    const steps = await page.getByRole("list", { name: "Timeline" }).locator("li").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-step")));
    expect(steps.slice(steps.indexOf("Tainted"))).toEqual(["Tainted", "Eviction requested", "Let go", "Drained", "Cleaning requested", "Cleaning failed", "Failed"]);
    expect(await step("Cleaning failed").textContent()).toContain("fpgaconf: exit code 3 (bitstream rejected)");
    expect(await page.getByRole("button", { name: "Clean again" }).count()).toBe(1);
    expect(violations).toEqual([]);
    await screenshot(page, "device-failed");
  });
});
