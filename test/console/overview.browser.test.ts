/**
 * The console's overview in Chromium, on a seeded fleet whose numbers are known: capacity per
 * resource class across the fleet and per host (free, used, reserved), binds bound and failed in
 * the last hour with the failures' reasons (still there after a reload), agents' liveness, and
 * holdings per project and instance. The capacity bars are checked in the screenshot itself.
 */
import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { launchBrowser, screenshot, signedInConsole } from "../support/browser.js";
import { barShares } from "../support/png.js";

const WAIT = { timeout: 15_000 };

/** A host with one GPU offering `n` PGPU accelerators. */
const GPU_HOST = (hostname: string, n: number) =>
  FAKE_HOST_DEVICES(n, hostname).map((d) => ({
    ...d,
    type: "GPU",
    deployables: d.deployables.map((dep) => ({ ...dep, name: `${hostname}_Gpu`, attributes: [{ key: "rc", value: "PGPU" }] })),
  }));

describe("the console's overview", () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let violations: string[];
  const failedArqs: string[] = [];

  const rpOf = async (hostname: string) => (await t.ok("service", op.RPS, { hostname })).resourceProviders[0].uuid as string;
  const create = async (profile: string, projectId: string) =>
    (await t.ok("service", `mutation($n: String!, $p: String) { createAcceleratorRequests(deviceProfileName: $n, projectId: $p) { uuid } }`, { n: profile, p: projectId })).createAcceleratorRequests as Array<{ uuid: string }>;
  const bind = (arqs: Array<{ uuid: string }>, hostname: string, rp: string, instanceUuid: string) =>
    t.ok("service", op.BIND, { bindings: arqs.map((a) => ({ arqUuid: a.uuid, hostname, deviceRpUuid: rp, instanceUuid })) });

  beforeAll(async () => {
    t = await startTestService();
    // compute1: 4 FPGA; compute2: 2 FPGA, its device in maintenance; compute3: 3 PGPU; old-node: an agent gone an hour ago.
    await t.ok("admin", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(4, "compute1") });
    await t.ok("admin", op.REPORT, { hostname: "compute2", devices: FAKE_HOST_DEVICES(2, "compute2") });
    await t.ok("admin", op.REPORT, { hostname: "compute3", devices: GPU_HOST("compute3", 3) });
    const at = new Date(Date.now() - 3600_000).toISOString();
    await t.service.app.reportHostInventory({ principal: "test", correlationId: "old", causationId: "old", at }, "old-node", GPU_HOST("old-node", 1) as never);
    const compute2 = (await t.ok("admin", `{ devices(filter: { hostname: "compute2" }) { nodes { uuid } } }`)).devices.nodes[0].uuid;
    await t.ok("admin", op.SET_STATUS, { uuid: compute2, status: "MAINTAINING" });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-1", groups: [{ "resources:FPGA": "1" }] } });
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fpga-2", groups: [{ "resources:FPGA": "2" }] } });
    // Three FPGAs bound on compute1: two to one instance of project-a, one to an instance of project-b.
    const rp1 = await rpOf("compute1");
    await bind(await create("fpga-2", "project-a"), "compute1", rp1, randomUUID());
    await bind(await create("fpga-1", "project-b"), "compute1", rp1, randomUUID());
    // Two binds that fail: to the device in maintenance, and to a provider that does not exist.
    const inMaintenance = await create("fpga-1", "project-b");
    await bind(inMaintenance, "compute2", await rpOf("compute2"), randomUUID());
    const nowhere = await create("fpga-1", "project-b");
    await bind(nowhere, "compute1", randomUUID(), randomUUID());
    failedArqs.push(inMaintenance[0]!.uuid, nowhere[0]!.uuid);
    await t.service.binder!.idle();
    await t.service.projector!.caughtUp();

    browser = await launchBrowser();
    const origin = new URL(t.url).origin;
    ({ page, violations } = await signedInConsole(browser, origin, TOKENS.admin.token));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const cells = async (table: string, row: string) => {
    const r = page.getByTestId(table).locator(`tr[data-row="${row}"]`);
    await r.waitFor(WAIT);
    const text = async (id: string) => Number(await r.getByTestId(id).textContent());
    return { free: await text("free"), used: await text("used"), reserved: await text("reserved"), total: await text("total") };
  };

  it("opens on the overview, with the fleet's capacity per resource class and per host", async () => {
    await page.getByRole("heading", { name: "Overview" }).waitFor(WAIT);
    expect(await cells("fleet-capacity", "FPGA")).toEqual({ free: 1, used: 3, reserved: 2, total: 6 });
    expect(await cells("fleet-capacity", "PGPU")).toEqual({ free: 4, used: 0, reserved: 0, total: 4 });
    expect(await cells("host-capacity", "compute1 FPGA")).toEqual({ free: 1, used: 3, reserved: 0, total: 4 });
    expect(await cells("host-capacity", "compute2 FPGA")).toEqual({ free: 0, used: 0, reserved: 2, total: 2 });
    expect(await cells("host-capacity", "compute3 PGPU")).toEqual({ free: 3, used: 0, reserved: 0, total: 3 });
    expect(await page.getByRole("img", { name: "FPGA: 1 free, 3 used, 2 reserved of 6" }).count()).toBe(1);
  });

  it("shows the binds of the last hour and why two failed", async () => {
    const totals = page.getByTestId("bind-totals");
    await totals.getByText("3 bound").waitFor(WAIT);
    expect(await totals.textContent()).toMatch(/3 bound 2 failed 40% failed/);
    const reasons = page.getByTestId("failure-reason");
    expect(await reasons.count()).toBe(2);
    const all = (await reasons.allTextContents()).join("\n");
    expect(all).toMatch(/maint/i);
    expect(all).toMatch(/resource provider/i);
  });

  it("shows each agent's liveness, the silent one first", async () => {
    await page.getByTestId("agent-totals").getByText("3 live, 1 not reporting").waitFor(WAIT);
    const first = page.getByTestId("agents").locator("tbody tr").first();
    expect(await first.getAttribute("data-row")).toBe("old-node");
    expect(await first.getByTestId("agent-liveness").textContent()).toBe("GONE");
    expect(await first.locator("td").last().textContent()).toMatch(/^(59|60|61) min ago$/);
  });

  it("shows who holds the accelerators, per project and per instance", async () => {
    await page.getByTestId("holding-totals").getByText("3 bound ARQs, 2 instances, 2 projects").waitFor(WAIT);
    const project = (p: string) => page.getByTestId("projects").locator(`tr[data-row="${p}"]`);
    expect(await project("project-a").getByTestId("arqs").textContent()).toBe("2");
    expect(await project("project-a").getByTestId("instances").textContent()).toBe("1");
    expect(await project("project-b").getByTestId("arqs").textContent()).toBe("1");
    expect(await page.getByTestId("instances").locator("tbody tr").first().getByTestId("arqs").textContent()).toBe("2");
  });

  it("draws the capacity bars in the proportions of the numbers (read from the screenshot)", async () => {
    await screenshot(page, "12-overview");
    const png = await page.getByTestId("fleet-capacity").locator('tr[data-row="FPGA"] svg.bar').screenshot();
    const shares = barShares(png);
    // used 3, reserved 2, free 1 of 6, in the console's colours.
    expect(shares.used).toBeCloseTo(3 / 6, 1);
    expect(shares.reserved).toBeCloseTo(2 / 6, 1);
    expect(shares.free).toBeCloseTo(1 / 6, 1);
    const gpu = barShares(await page.getByTestId("fleet-capacity").locator('tr[data-row="PGPU"] svg.bar').screenshot());
    expect(gpu.free).toBeCloseTo(1, 1);
  });

  it("keeps the failures after a reload, and the ARQ's page says why it failed", async () => {
    await page.reload();
    await page.getByTestId("failure-reason").first().waitFor(WAIT);
    expect(await page.getByTestId("failure-reason").count()).toBe(2);
    await page.getByTestId("recent-failures").getByRole("link").first().click();
    const reason = page.getByTestId("bind-failure-reason");
    await reason.waitFor(WAIT);
    expect(await reason.textContent()).toMatch(/resource provider/i); // the newest: the unknown provider
    expect(violations).toEqual([]);
  });

  it("tells a stream's history in words, picked from a list", async () => {
    await page.getByRole("link", { name: "History", exact: true }).click();
    await page.getByText("Pick a host, a device profile or an ARQ").waitFor(WAIT);
    const picker = page.getByLabel("Pick a stream");
    await picker.locator('option[value="host-compute2"]').waitFor({ state: "attached", ...WAIT });
    await picker.selectOption("host-compute2");
    const summaries = page.getByTestId("summary");
    await summaries.first().waitFor(WAIT);
    const text = (await summaries.allTextContents()).join("\n");
    expect(text).toContain("compute2");
    expect(text).toMatch(/MAINTAINING/);
    expect(text).toMatch(/by admin/);
    await screenshot(page, "13-history-summaries");
  });

  it("adds a row to the ARQ table when an ARQ is created, without waiting for a refresh", async () => {
    await page.getByRole("link", { name: "Accelerator requests" }).click();
    await page.getByTestId("live").filter({ hasText: "live" }).waitFor(WAIT);
    const [first] = await create("fpga-1", "project-c");
    await page.locator(`tr[data-arq="${first!.uuid}"]`).waitFor(WAIT);
    // A hidden page stops refreshing: a row that appears now came through the subscription.
    await page.evaluate("Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' })");
    const rows = page.locator("tbody tr[data-arq]");
    const before = await rows.count();
    const [arq] = await create("fpga-1", "project-c");
    await page.locator(`tr[data-arq="${arq!.uuid}"]`).waitFor(WAIT);
    expect(await rows.count()).toBe(before + 1);
  });
});
