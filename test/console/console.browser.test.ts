/**
 * The operator console and the GraphQL explorer in a real browser (Debian's chromium through
 * playwright-core), against the service as npm start runs it, with every request that is not for
 * the service refused: sign in, watch a host appear after an agent report, toggle maintenance,
 * watch an ARQ go from INITIAL to BOUND when another client binds it, create a profile with a bad
 * key and see the error at that key, and run a query and a subscription in GraphiQL; all with
 * the site's Content-Security-Policy refusing nothing. Screenshots: test-artifacts/screenshots/.
 */
import { randomUUID } from "node:crypto";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportOnce } from "../../src/clients/agent/agent.js";
import { driverEnv } from "../../src/clients/agent/driver-env.js";
import { fakeMigPartitioner } from "../../src/clients/agent/drivers/fake-mig.js";
import { createLogger } from "../../src/infra/logger.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { launchBrowser, offlineContext, screenshot, watchCsp } from "../support/browser.js";

const WAIT = { timeout: 15_000 };
// What page.evaluate runs is the page's code: it sees the browser's globals, which this Node
// project's types do not declare.
declare const window: { marker?: number };
declare const document: { activeElement: { textContent: string | null } | null };

describe("the console in a browser", () => {
  let t: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let blocked: string[];
  let violations: string[];
  let page: Page;
  let origin: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    t = await startTestService();
    origin = new URL(t.url).origin;
    browser = await launchBrowser();
    ({ context, blocked } = await offlineContext(browser, origin));
    violations = await watchCsp(context);
    page = await context.newPage();
    page.on("pageerror", (err) => pageErrors.push(err.message));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("signs in with a token from the keyboard", async () => {
    await page.goto(`${origin}/console/`);
    await page.getByLabel("Bearer token").waitFor(WAIT);
    // The hint names this service's DATA_DIR, whatever it is (here a temporary one, not data/).
    await page.locator(".token-command").filter({ hasText: `jq -r '.tokens[0].token' ${t.dataDir}/tokens.json` }).waitFor(WAIT);
    await page.keyboard.type("not-a-token-0000000000");
    await page.keyboard.press("Enter");
    await page.getByRole("alert").filter({ hasText: "UNAUTHENTICATED" }).waitFor(WAIT);
    await page.getByLabel("Bearer token").fill(TOKENS.admin.token);
    await page.keyboard.press("Enter");
    await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);
    expect(await page.locator(".who").textContent()).toContain("admin");
    // The first Tab reaches the skip link.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await screenshot(page, "01-signed-in");
  });

  it("shows a host once its agent reports, without a reload", async () => {
    await page.getByRole("link", { name: "Hosts", exact: true }).click();
    await page.getByText("No host has reported yet").waitFor(WAIT);
    await page.evaluate(() => (window.marker = 1));
    await reportOnce({
      client: { url: t.url, token: TOKENS.agent.token },
      hostname: "compute1",
      drivers: ["fake"],
      env: driverEnv({ hostname: "compute1", drivers: "fake", sysfsRoot: "/sys", lspci: "lspci", pciWhitelist: "[]", nvidiaSkipVfs: false, vgpuTypes: "" }),
      intervalMs: 60_000,
      log: createLogger("silent"),
      retries: 0,
    });
    await page.getByRole("link", { name: "compute1" }).waitFor(WAIT);
    expect(await page.evaluate(() => window.marker)).toBe(1);
    expect(await page.getByRole("row", { name: /compute1/ }).getByTestId("agent-liveness").textContent()).toBe("LIVE");
    await screenshot(page, "02-hosts");
  });

  it("marks a host whose agent stopped reporting", async () => {
    const at = new Date(Date.now() - 3600_000).toISOString();
    await t.service.app.reportHostInventory({ principal: "test", correlationId: "old", causationId: "old", at }, "compute-old", FAKE_HOST_DEVICES(2, "compute-old") as never);
    const badge = page.getByRole("row", { name: /compute-old/ }).getByTestId("agent-liveness");
    await badge.waitFor(WAIT);
    expect(await badge.textContent()).toBe("GONE");
    expect(await badge.getAttribute("title")).toContain("the agent of host compute-old is gone");
    await page.getByRole("row", { name: /compute-old/ }).getByRole("link", { name: "compute-old" }).waitFor(WAIT);
    expect(await page.locator("tr.stale").count()).toBe(1);
  });

  it("shows the host's device tree and toggles a device's maintenance", async () => {
    await page.getByRole("link", { name: "compute1" }).click();
    const status = page.getByTestId("device-status").first();
    await status.waitFor(WAIT);
    expect(await status.textContent()).toBe("ENABLED");
    expect(await page.locator(".device header").first().textContent()).toMatch(/\d+ free, 0 used of \d+ attach handles/);
    await page.getByRole("button", { name: "Put in maintenance" }).first().click();
    await page.getByTestId("device-status").filter({ hasText: "MAINTAINING" }).first().waitFor(WAIT);
    expect(await page.getByTestId("device-state").first().textContent()).toBe("TAINTED");
    expect(await page.getByRole("list", { name: "Taints" }).first().textContent()).toMatch(/cyborg\.openstack\.org\/maintenance:NoSchedule by admin/);
    await screenshot(page, "03-host-maintenance");
    await page.getByRole("button", { name: "End maintenance" }).first().click();
    await page.getByTestId("device-status").filter({ hasText: "ENABLED" }).first().waitFor(WAIT);
  });

  it("watches an ARQ go from INITIAL to BOUND when another client binds it", async () => {
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "fake-fpga", groups: [{ "resources:FPGA": "1" }] } });
    const arq = (await t.ok("service", op.CREATE_ARQS, { name: "fake-fpga" })).createAcceleratorRequests[0];
    await page.getByRole("link", { name: "Accelerator requests" }).click();
    const row = page.locator(`tr[data-arq="${arq.uuid}"]`);
    await row.getByTestId("arq-state").filter({ hasText: "INITIAL" }).waitFor(WAIT);
    await page.getByTestId("live").filter({ hasText: "live" }).waitFor(WAIT);
    await page.evaluate(() => (window.marker = 2));
    // The subscription is open on the server before the bind (the router listens from its first subscriber).
    while (t.service.notifications.listening === 0) await new Promise((r) => setTimeout(r, 20));
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0];
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp.uuid, instanceUuid: randomUUID() }] });
    // Sooner than the list's 5 s refresh: the subscription delivered it.
    await row.getByTestId("arq-state").filter({ hasText: "BOUND" }).waitFor({ timeout: 4_000 });
    await page.locator(".feed").getByText("COMPLETED").waitFor(WAIT);
    expect(await page.evaluate(() => window.marker)).toBe(2);
    await screenshot(page, "04-arqs-live");
  });

  it("creates, disables, enables and deletes a profile, and shows a bad key's error at that key", async () => {
    await page.getByRole("link", { name: "Device profiles" }).click();
    await page.getByLabel("Name", { exact: true }).fill("gpu-bad");
    await page.locator("#g0r0k").fill("accel:bogus");
    await page.locator("#g0r0v").fill("x");
    await page.getByRole("button", { name: "Create profile" }).click();
    const error = page.locator('[data-field="groups[0].accel:bogus"] .field-error');
    await error.waitFor(WAIT);
    expect(await error.textContent()).toContain("Unknown accel key bogus");
    expect(await page.locator("#g0r0k").getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "05-profile-error");

    await page.locator("#g0r0k").fill("resources:GPU");
    await page.locator("#g0r0v").fill("1");
    await page.getByLabel("Name", { exact: true }).fill("gpu-one");
    await page.getByRole("button", { name: "Create profile" }).click();
    await page.getByRole("status").filter({ hasText: "Created gpu-one." }).waitFor(WAIT);
    await page.getByRole("row", { name: /gpu-one/ }).waitFor(WAIT);
    // Version and state are shown; an admin disables the profile and enables it again.
    await page.getByRole("row", { name: /gpu-one 1 enabled/ }).waitFor(WAIT);
    await page.getByRole("button", { name: "Disable gpu-one" }).click();
    await page.getByRole("row", { name: /gpu-one 1 disabled/ }).waitFor(WAIT);
    expect((await t.ok("admin", `{ deviceProfile(name: "gpu-one") { enabled } }`)).deviceProfile.enabled).toBe(false);
    await page.getByRole("button", { name: "Enable gpu-one" }).click();
    await page.getByRole("row", { name: /gpu-one 1 enabled/ }).waitFor(WAIT);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Delete gpu-one" }).click();
    await page.getByRole("row", { name: /gpu-one/ }).waitFor({ state: "detached", ...WAIT });
  });

  it("shows an ARQ's history and the projections' health", async () => {
    const arq = (await t.ok("admin", `{ acceleratorRequests(filter: { state: BOUND }) { nodes { uuid } } }`)).acceleratorRequests.nodes[0];
    await page.goto(`${origin}/console/history?stream=arq-${arq.uuid}`);
    await page.locator(".timeline li").filter({ hasText: "ArqBound" }).waitFor(WAIT);
    await screenshot(page, "06-history");
    await page.getByRole("link", { name: "Health", exact: true }).click();
    await page.getByRole("row", { name: /arqs live/ }).waitFor(WAIT);
    await screenshot(page, "07-health");
  });

  it("runs a query and a subscription in GraphiQL with no network beyond the service", async () => {
    const explorer = await context.newPage();
    explorer.on("pageerror", (err) => pageErrors.push(err.message));
    await explorer.goto(`${origin}/graphql`);
    await explorer.getByLabel("Bearer token").waitFor(WAIT);
    expect(await explorer.getByLabel("Bearer token").inputValue()).toBe(TOKENS.admin.token); // the console's, until one is pasted
    await explorer.getByLabel("Bearer token").fill(TOKENS.admin.token);
    const run = explorer.locator(".graphiql-execute-button");
    await run.waitFor(WAIT);
    await explorer.locator(".graphiql-query-editor .monaco-editor").waitFor(WAIT);
    // Its first comment says how to get the admin token of this service's DATA_DIR.
    await explorer.locator(".graphiql-query-editor").getByText(`${t.dataDir}/tokens.json`).first().waitFor(WAIT);
    await run.click();
    await explorer.locator(".graphiql-response").getByText('"principal": "admin"').waitFor(WAIT);
    await screenshot(explorer, "08-graphiql-query");

    // A subscription, from ?query=: it waits, then shows the bind another client makes.
    const service = await context.newPage();
    await service.goto(`${origin}/graphql?query=${encodeURIComponent("subscription { acceleratorRequestBound { tag status arq { state } } }")}`);
    await service.getByLabel("Bearer token").fill(TOKENS.service.token);
    await service.locator(".graphiql-query-editor").getByText("acceleratorRequestBound").first().waitFor(WAIT);
    const before = t.service.notifications.listening;
    await service.locator(".graphiql-execute-button").click();
    while (t.service.notifications.listening === before) await new Promise((r) => setTimeout(r, 20));
    const arq = (await t.ok("service", op.CREATE_ARQS, { name: "fake-fpga" })).createAcceleratorRequests[0];
    const rp = (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0];
    await t.ok("service", op.BIND, { bindings: [{ arqUuid: arq.uuid, hostname: "compute1", deviceRpUuid: rp.uuid, instanceUuid: randomUUID() }] });
    await service.locator(".graphiql-response").getByText('"status": "COMPLETED"').waitFor(WAIT);
    await screenshot(service, "09-graphiql-subscription");

    expect(blocked).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(violations).toEqual([]); // the site's Content-Security-Policy refused nothing
  });

  it("shows which ARQ holds each used attach handle", async () => {
    await page.goto(`${origin}/console/hosts/compute1`);
    await page.locator(".handles li.used").first().waitFor(WAIT);
    expect(await page.locator(".handles li.used").count()).toBe(2);
    expect(await page.locator(".device header").first().textContent()).toMatch(/\d+ free, 2 used of \d+ attach handles/);
    await screenshot(page, "10-host-with-binds");
  });

  it("pages and searches 1,000 hosts", { timeout: 120_000 }, async () => {
    const hosts = Array.from({ length: 1000 }, (_, i) => `rack${String(Math.floor(i / 40)).padStart(2, "0")}-node${String(i).padStart(4, "0")}`);
    // Straight to the application (the agent's path is tested above): a thousand reports in seconds.
    const ctx = { principal: "test", correlationId: "seed-1000", causationId: "seed-1000", at: new Date().toISOString() };
    for (let i = 0; i < hosts.length; i += 50) {
      await Promise.all(hosts.slice(i, i + 50).map((h) => t.service.app.reportHostInventory(ctx, h, FAKE_HOST_DEVICES(2, h) as never)));
    }
    await t.service.projector!.caughtUp();
    await page.goto(`${origin}/console/hosts`);
    await page.getByText("1002 of 1002 hosts").waitFor(WAIT);
    expect(await page.locator("tbody tr").count()).toBe(50);
    await page.getByText("Page 1 of 21").waitFor(WAIT);
    await page.getByRole("button", { name: "Next" }).click();
    await page.getByText("Page 2 of 21").waitFor(WAIT);
    await page.getByLabel("Search").fill("rack07-node0299");
    await page.getByText("1 of 1002 hosts").waitFor(WAIT);
    await page.getByRole("link", { name: "rack07-node0299" }).click();
    await page.getByRole("heading", { name: "Host rack07-node0299" }).waitFor(WAIT);
    await screenshot(page, "11-host-of-1000");
  });

  it("shows a partitioned GPU's slots, slices and each profile's room", async () => {
    const env = driverEnv({ hostname: "compute-mig", drivers: "fake-mig", sysfsRoot: "/sys", lspci: "lspci", pciWhitelist: "[]", nvidiaSkipVfs: false, vgpuTypes: "" });
    // A 3g.40gb that exists on the GPU (made before the agent reports), at slots 4..7.
    await fakeMigPartitioner.create(env, { controlPath: { domain: "0000", bus: "40", device: "00", function: "0" }, profile: { name: "3g.40gb", toolId: "9" }, placement: { start: 4, size: 4 } });
    await reportOnce({ client: { url: t.url, token: TOKENS.admin.token }, hostname: "compute-mig", drivers: ["fake-mig"], env, intervalMs: 60_000, log: createLogger("silent"), retries: 0 });
    await page.goto(`${origin}/console/hosts/compute-mig`);
    const bar = page.getByRole("list", { name: "Slots, in order" });
    await bar.waitFor(WAIT);
    expect(await bar.locator("li").allTextContents()).toEqual(["free", "free", "free", "free", "3g.40gb"]);
    expect(await page.getByLabel("Partitions").locator("p").textContent()).toBe("4 of 7 compute slices free; 4 of 8 slots free");
    expect(await page.getByRole("table", { name: "Partition profiles" }).getByRole("row", { name: /3g\.40gb/ }).locator("td").allTextContents()).toEqual(["3g.40gb", "CUSTOM_MIG_3G_40GB", "1", "1", "2"]);
    await screenshot(page, "12-partitioned-gpu");
  });
});
