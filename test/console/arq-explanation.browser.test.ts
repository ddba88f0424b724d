/**
 * The console's ARQ page in Chromium explains an ARQ no device can take: the hosts grouped by the
 * rule that ruled them out, with a count, an example host and what would have to change; the
 * closest hosts in detail; and the project's quota with its usage. A bound ARQ is not explained.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { launchBrowser, screenshot, signedInConsole } from "../support/browser.js";

const WAIT = { timeout: 15_000 };
const SET_QUOTA = `mutation($p: String!, $limits: [QuotaLimitInput!]!) { setProjectQuota(projectId: $p, limits: $limits) { projectId } }`;

describe("the console's ARQ page explains why an ARQ is not bound", () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let violations: string[];
  let origin: string;
  let stuck: string;
  let bound: string;

  beforeAll(async () => {
    t = await startTestService();
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "needs-trait", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_QSFP28": "required" }] } });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "any-fpga", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(2) });
    await t.ok("admin", SET_QUOTA, { p: "p1", limits: [{ resourceClass: "FPGA", limit: 3 }] });
    stuck = (await t.ok("member", op.CREATE_ARQS, { name: "needs-trait" })).createAcceleratorRequests[0].uuid;
    bound = (await t.ok("member", op.CREATE_ARQS, { name: "any-fpga" })).createAcceleratorRequests[0].uuid;
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid;
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: bound, hostname: "compute1", deviceRpUuid: rp, instanceUuid: "4a0c3a36-7c8e-4b9a-9c53-2f0e0b6a1d31" }] });

    browser = await launchBrowser();
    origin = new URL(t.url).origin;
    ({ page, violations } = await signedInConsole(browser, origin, TOKENS.admin.token));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("shows the rule with its count, an example host and the remedy, the closest host, and the quota with usage", async () => {
    await page.getByRole("link", { name: "Accelerator requests", exact: true }).click();
    await page.getByRole("link", { name: stuck.slice(0, 8) }).click();
    const why = page.getByRole("region", { name: "Why it is not bound" });
    await why.getByTestId("explanation-summary").waitFor(WAIT);
    expect(await why.getByTestId("explanation-summary").textContent()).toBe("No host of 1 could take it now.");

    const rows = why.getByRole("table", { name: "Hosts ruled out, by rule" }).locator("tbody tr");
    expect(await rows.count()).toBe(1);
    const row = rows.first();
    expect(await row.getAttribute("data-rule")).toBe("TRAIT_MISSING");
    const cells = await row.locator("td").allTextContents();
    expect(cells[0]).toBe("1");
    expect(cells[1]).toBe("devices lack a required trait TRAIT_MISSING");
    expect(cells[2]).toContain("compute1: group 0: no provider fits; the closest: it lacks required trait CUSTOM_QSFP28");
    expect(cells[3]).toBe("trait CUSTOM_QSFP28 on the provider, or the group not requiring it");

    const closest = why.getByRole("list", { name: "Hosts closest to taking it" }).locator("li[data-host]");
    expect(await closest.count()).toBe(1);
    expect(await closest.first().textContent()).toContain("would take it with trait CUSTOM_QSFP28 on the provider");

    const fpga = why.getByRole("table", { name: "The project's quota" }).locator('tr[data-class="FPGA"]');
    // Two ARQs of the project claim an FPGA each: the bound one and the one waiting.
    expect(await fpga.locator("td").allTextContents()).toEqual(["2", "3"]);
    expect(violations).toEqual([]);
    await screenshot(page, "arq-explanation");
  });

  it("explains nothing about a bound ARQ", async () => {
    await page.goto(`${origin}/console/arqs?arq=${bound}`);
    await page.getByRole("complementary", { name: `ARQ ${bound}` }).getByText("BOUND", { exact: true }).waitFor(WAIT);
    expect(await page.getByRole("region", { name: "Why it is not bound" }).count()).toBe(0);
  });
});
