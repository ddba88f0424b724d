/**
 * The console and the GraphQL explorer under their Content-Security-Policy, in Chromium: both work
 * with no refusal; a link's ?query= only fills the explorer's editor (which points out a
 * mutation), and the mutation is sent when run is pressed there and not before; and a page of another origin (another port) that
 * frames them, while an operator is signed in, gets neither page in its frames.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { launchBrowser, offlineContext, screenshot, watchCsp } from "../support/browser.js";

const WAIT = { timeout: 15_000 };
const deleteProfile = (name: string) => `mutation { deleteDeviceProfiles(names: ["${name}"]) }`;

/** A page of another origin that frames the console and the explorer (with a mutation in its link). */
async function startOtherOrigin(service: string): Promise<{ server: Server; url: string }> {
  const explorer = `${service}/graphql?query=${encodeURIComponent(deleteProfile("framed"))}`;
  const html = `<!doctype html><title>elsewhere</title>
<iframe name="console" src="${service}/console/" width="800" height="400"></iframe>
<iframe name="explorer" src="${explorer}" width="800" height="400"></iframe>`;
  const server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(html));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/** The requests and WebSocket messages of `context` that carry `text`. */
function sentWith(context: BrowserContext, text: string): string[] {
  const sent: string[] = [];
  const watch = (page: Page) => {
    page.on("request", (r: Request) => void (r.postData()?.includes(text) && sent.push(`${r.method()} ${r.url()}`)));
    page.on("websocket", (ws) => ws.on("framesent", (f) => void (String(f.payload).includes(text) && sent.push(`ws ${ws.url()}`))));
  };
  context.pages().forEach(watch);
  context.on("page", watch);
  return sent;
}

async function signIn(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}/console/`);
  await page.getByLabel("Bearer token").fill(TOKENS.admin.token);
  await page.keyboard.press("Enter");
  await page.getByRole("navigation", { name: "Sections" }).waitFor(WAIT);
}

const profileNames = async (t: TestService): Promise<string[]> =>
  ((await t.ok("admin", "{ deviceProfiles { name } }")) as { deviceProfiles: { name: string }[] }).deviceProfiles.map((p) => p.name);

describe("the console and the explorer against other origins", () => {
  let t: TestService;
  let browser: Browser;
  let origin: string;
  let other: { server: Server; url: string };

  beforeAll(async () => {
    t = await startTestService();
    origin = new URL(t.url).origin;
    browser = await launchBrowser();
    other = await startOtherOrigin(origin);
  });
  afterAll(async () => {
    await browser?.close();
    other?.server.close();
    await t?.close();
  });

  it("works under the policy with no refusal, and runs a link's mutation only when run is pressed", async () => {
    const { context, blocked } = await offlineContext(browser, origin);
    const violations = await watchCsp(context);
    const page = await context.newPage();
    await signIn(page, origin);
    for (const [section, shown] of [
      ["Hosts", page.getByText("No host has reported yet")],
      ["Device profiles", page.getByRole("button", { name: "Create profile" })],
      ["Health", page.getByRole("row", { name: /arqs live/ })],
    ] as const) {
      await page.getByRole("link", { name: section, exact: true }).click();
      await shown.waitFor(WAIT);
    }

    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "linked", groups: [{ "resources:FPGA": "1" }] } });
    const sent = sentWith(context, "deleteDeviceProfiles");
    const explorer = await context.newPage();
    const schema = explorer.waitForResponse((r) => r.url() === t.url && !!r.request().postData()?.includes("__schema"));
    await explorer.goto(`${origin}/graphql?query=${encodeURIComponent(deleteProfile("linked"))}`);
    await explorer.getByRole("alert").filter({ hasText: "put a mutation in the editor" }).waitFor(WAIT);
    await explorer.locator(".graphiql-query-editor").getByText("deleteDeviceProfiles").first().waitFor(WAIT);
    expect((await schema).status()).toBe(200);
    // Loaded, with the schema fetched and the mutation in the editor: nothing has run.
    expect(sent).toEqual([]);
    expect(await profileNames(t)).toContain("linked");
    await screenshot(explorer, "12-explorer-link-mutation");

    await explorer.locator(".graphiql-execute-button").click();
    await explorer.locator(".graphiql-response").getByText('"deleteDeviceProfiles"').waitFor(WAIT);
    expect(sent).toEqual([`POST ${t.url}`]);
    expect(await profileNames(t)).not.toContain("linked");

    // The editor's completion comes from Monaco's GraphQL worker.
    await explorer.locator(".graphiql-query-editor .monaco-editor").click();
    await explorer.keyboard.press("ControlOrMeta+A");
    await explorer.keyboard.type("{ view");
    await explorer.locator(".suggest-widget").getByText("viewer").first().waitFor(WAIT);
    expect(violations).toEqual([]);
    expect(blocked).toEqual([]);
    await context.close();
  });

  it("shows neither page in a frame of another origin, even to a signed-in operator", async () => {
    const { context, blocked } = await offlineContext(browser, origin, new URL(other.url).origin);
    const violations = await watchCsp(context);
    const page = await context.newPage();
    await signIn(page, origin);
    await t.ok("admin", op.CREATE_PROFILE, { input: { name: "framed", groups: [{ "resources:FPGA": "1" }] } });
    const sent = sentWith(context, "deleteDeviceProfiles");

    // The service answers both frames' requests; the browser refuses to show what it answered.
    const answered = ["/console/", "/graphql?"].map((path) => page.waitForResponse((r) => r.url().startsWith(`${origin}${path}`)));
    await page.goto(other.url); // its load event waits for both frames, refused or not
    for (const response of await Promise.all(answered)) expect(response.status()).toBe(200);
    const frames = page.frames().filter((f) => f !== page.mainFrame());
    expect(frames.map((f) => f.name()).sort()).toEqual(["console", "explorer"]);
    for (const frame of frames) {
      expect(frame.url(), frame.name()).not.toContain(origin);
      expect(await frame.getByLabel("Bearer token").count(), frame.name()).toBe(0);
    }
    expect(violations.filter((v) => v.includes("frame-ancestors"))).toHaveLength(2);
    await screenshot(page, "13-framed-elsewhere");
    expect(sent).toEqual([]);
    expect(await profileNames(t)).toContain("framed");
    expect(blocked).toEqual([]);
    await context.close();
  });
});
