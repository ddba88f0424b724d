import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StaticSite } from "../../src/api/static-site.js";

/** A Content-Security-Policy header as directive -> its sources. */
const directives = (header: string | null): Record<string, string> =>
  Object.fromEntries((header ?? "").split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...sources]) => [name, sources.join(" ")]));

describe("the console's static files", () => {
  let root: string;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "site-"));
    mkdirSync(join(root, "assets"));
    writeFileSync(join(root, "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(join(root, "graphiql.html"), "<!doctype html><title>explorer</title>");
    writeFileSync(join(root, "assets", "app-abc123.js"), "console.log(1);".repeat(200));
    writeFileSync(join(root, "..", "secret.txt"), "no");
    const site = new StaticSite(root, "/console/");
    server = createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0]!;
      if (path === "/graphql") return site.page(req, res, "graphiql.html");
      if (!site.serve(req, res, path)) res.writeHead(404).end("not the site's");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server?.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(join(root, "..", "secret.txt"), { force: true });
  });

  it("serves pages for client-side routes, assets with long caching, gzip when asked", async () => {
    const page = await fetch(`${base}/console/hosts/compute1`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(await page.text()).toContain("<title>console</title>");
    const asset = await fetch(`${base}/console/assets/app-abc123.js`);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect(asset.headers.get("content-encoding")).toBe("gzip"); // fetch asks for it and decodes it
    expect((await asset.text()).length).toBe(15 * 200);
    expect((await fetch(`${base}/console`, { redirect: "manual" })).headers.get("location")).toBe("/console/");
    expect(await (await fetch(`${base}/graphql`)).text()).toContain("explorer");
  });

  it("forbids framing and foreign script on every page and file, and loosens only the explorer's styles", async () => {
    const frameGuards = { "x-frame-options": "DENY", "referrer-policy": "no-referrer", "x-content-type-options": "nosniff" };
    for (const path of ["/console/", "/console/hosts/compute1", "/graphql", "/console/graphiql.html", "/console/assets/app-abc123.js"]) {
      const res = await fetch(`${base}${path}`, { method: path.endsWith(".js") ? "GET" : "HEAD" });
      expect(Object.fromEntries(Object.keys(frameGuards).map((h) => [h, res.headers.get(h)])), path).toEqual(frameGuards);
      const csp = directives(res.headers.get("content-security-policy"));
      expect(csp, path).toMatchObject({
        "default-src": "'self'",
        "script-src": "'self'",
        "object-src": "'none'",
        "base-uri": "'none'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
      });
      const explorer = path === "/graphql" || path.endsWith("graphiql.html");
      expect(csp["style-src"], path).toBe(explorer ? "'self' 'unsafe-inline'" : "'self'");
      expect(csp["font-src"], path).toBe(explorer ? "'self' data:" : "'self'");
      expect(csp["img-src"], path).toBe(explorer ? "'self' data:" : "'self'");
    }
  });

  it("answers 404 for missing files and never leaves its folder", async () => {
    const missing = await fetch(`${base}/console/assets/<b>nope</b>.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-content-type-options")).toBe("nosniff");
    expect(missing.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect((await fetch(`${base}/console/..%2fsecret.txt`)).status).toBe(404);
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });

  it("says how to build it when it is not built", async () => {
    const site = new StaticSite(join(root, "missing"), "/console/");
    expect(site.built).toBe(false);
  });
});
