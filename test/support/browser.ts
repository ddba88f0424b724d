/**
 * Debian's chromium driven by playwright-core (no browser download): headless, no sandbox (the
 * tests run as root), and none of the background connections that a closed network refuses.
 * global-setup.ts installs the package when it is missing. Screenshots go to test-artifacts/
 * (gitignored; CI keeps them as artifacts).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { CHROMIUM_PATHS } from "./global-setup.js";

export const chromiumPath = () => process.env.CHROMIUM_PATH ?? CHROMIUM_PATHS.find((p) => existsSync(p));

export const ARTIFACTS = process.env.TEST_ARTIFACTS_DIR ?? join(process.cwd(), "test-artifacts");

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error(`no chromium at ${CHROMIUM_PATHS.join(" or ")}: apt-get install chromium (test/support/global-setup.ts does it as root)`);
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-default-apps",
      "--disable-extensions",
    ],
  });
}

/**
 * A context (a laptop screen) that lets the page reach only the given origins (the service under
 * test; for some tests also a page of another origin): any other request is refused and
 * recorded, so a test can say that nothing left the machine.
 */
export async function offlineContext(browser: Browser, ...allowedOrigins: string[]): Promise<{ context: BrowserContext; blocked: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const blocked: string[] = [];
  const allowed = [...allowedOrigins, "data:", "blob:"];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (allowed.some((prefix) => url.startsWith(prefix))) return route.continue();
    blocked.push(url);
    return route.abort("internetdisconnected");
  });
  return { context, blocked };
}

/**
 * Every Content-Security-Policy refusal in the context's pages, as "directive blocked-uri (page)":
 * the `securitypolicyviolation` events of each document and the refusals Chromium logs (a refused
 * frame, a worker's) to the console.
 */
export async function watchCsp(context: BrowserContext): Promise<string[]> {
  const violations: string[] = [];
  await context.exposeBinding("__cspViolation", (_source, line: string) => void violations.push(line));
  // Runs in each document before its own scripts (the policy does not apply to it).
  await context.addInitScript(() => {
    // This Node project's types do not declare the browser's globals.
    const page = globalThis as unknown as {
      __cspViolation(line: string): void;
      addEventListener(type: string, listener: (e: { effectiveDirective: string; blockedURI: string; documentURI: string }) => void): void;
    };
    page.addEventListener("securitypolicyviolation", (v) => void page.__cspViolation(`${v.effectiveDirective} ${v.blockedURI} (${v.documentURI})`));
  });
  context.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(`console: ${m.text().slice(0, 300)}`);
  });
  return violations;
}

/**
 * A page of the console at `origin`, signed in with `token` (the sections' navigation shown), in
 * an offline context whose CSP refusals are watched.
 */
export async function signedInConsole(browser: Browser, origin: string, token: string): Promise<{ page: Page; violations: string[] }> {
  const { context } = await offlineContext(browser, origin);
  const violations = await watchCsp(context);
  const page = await context.newPage();
  await page.goto(`${origin}/console/`);
  await page.getByLabel("Bearer token").fill(token);
  await page.keyboard.press("Enter");
  await page.getByRole("navigation", { name: "Sections" }).waitFor({ timeout: 15_000 });
  return { page, violations };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = join(ARTIFACTS, "screenshots");
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}
