/**
 * The front end's build output (console/, built by `npm run build` into dist/console): the
 * operator console at /console and the GraphQL explorer at GET /graphql. Files are read once and
 * kept in memory with their gzip form; hashed assets are cached for a year, pages revalidated.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { IncomingMessage, ServerResponse } from "node:http";
import { securityHeaders } from "./security-headers.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".map": "application/json; charset=utf-8",
};

/** dist/console under the project's root (the folder holding package.json), from src/ or dist/src/. */
export function defaultSiteRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, "dist", "console");
}

interface File {
  /** The path under the site's root. */
  name: string;
  body: Buffer;
  gzipped?: Buffer;
  type: string;
}

export class StaticSite {
  private readonly files = new Map<string, File>();

  /** `root` is the build output; its files are served under `prefix` ("/console/"). */
  constructor(
    readonly root: string,
    readonly prefix: string,
  ) {}

  get built(): boolean {
    return existsSync(join(this.root, "index.html"));
  }

  /** Serves `pathname` (under the prefix) or a page of the site; false when the path is not the site's. */
  serve(req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    if (pathname === this.prefix.slice(0, -1)) {
      res.writeHead(308, { location: this.prefix }).end();
      return true;
    }
    if (!pathname.startsWith(this.prefix)) return false;
    const rel = pathname.slice(this.prefix.length);
    // A path without an extension is a client-side route of the single-page console.
    const file = this.read(rel === "" || !extname(rel) ? "index.html" : rel);
    if (file === undefined) return this.notBuilt(res);
    if (file === null) {
      // It repeats the path it was asked for: never to be read as HTML, nor framed.
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8", ...securityHeaders("") }).end(`no file ${pathname}\n`);
      return true;
    }
    this.send(req, res, file, rel.startsWith("assets/"));
    return true;
  }

  /** One page of the site (the GraphQL explorer at /graphql). */
  page(req: IncomingMessage, res: ServerResponse, name: string): void {
    const file = this.read(name);
    if (!file) return void this.notBuilt(res);
    this.send(req, res, file, false);
  }

  private send(req: IncomingMessage, res: ServerResponse, file: File, immutable: boolean) {
    const gzip = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? "")) && file.body.length > 1024;
    if (gzip) file.gzipped ??= gzipSync(file.body);
    const body = gzip ? file.gzipped! : file.body;
    res.writeHead(200, {
      "content-type": file.type,
      "content-length": body.length,
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
      ...securityHeaders(file.name),
      vary: "accept-encoding",
      ...(gzip ? { "content-encoding": "gzip" } : {}),
    });
    res.end(req.method === "HEAD" ? undefined : body);
  }

  /** The file, null when the site has no such file, undefined when the site is not built. */
  private read(rel: string): File | null | undefined {
    if (!this.built) return undefined;
    const path = normalize(join(this.root, rel));
    if (!path.startsWith(this.root + sep)) return null;
    const cached = this.files.get(path);
    if (cached) return cached;
    try {
      const file = { name: path.slice(this.root.length + 1), body: readFileSync(path), type: TYPES[extname(path)] ?? "application/octet-stream" };
      // Only files that exist are kept: the site's own, a bounded set.
      this.files.set(path, file);
      return file;
    } catch {
      return null;
    }
  }

  private notBuilt(res: ServerResponse): true {
    res.writeHead(503, { "content-type": "text/plain; charset=utf-8", ...securityHeaders("") }).end(`the console is not built (no ${this.root}): run npm run build\n`);
    return true;
  }
}
