/**
 * The bitstream catalogue in Glance (GLANCE_URL), as in OpenStack: a bitstream is an active image;
 * its metadata are image properties named after the device-profile keys (`accel:function_id`,
 * `accel:function_name`, `accel:region_type`, `accel:vendor`), its id and name the image's, its
 * checksum Glance's own `os_hash_algo:os_hash_value` (sha512 by default). An image may instead
 * carry a key as a tag `<key>=<value>` (`accel:function_id=3AFB`), as images tagged by hand are:
 * a property wins over a tag. Lookups by function id or name ask Glance twice, by its exact-match
 * property filter and by its tag filter, and merge the answers; a lookup by name (with or without
 * the type suffix) reads the catalogue's list. GLANCE_TOKEN, when set, is sent as X-Auth-Token.
 */
import { createHash } from "node:crypto";
import { Readable, Transform } from "node:stream";
import type { Bitstream, BitstreamMetadata } from "../../domain/bitstreams/bitstream.js";
import { CHECKSUM_RE, nameMatches } from "../../domain/bitstreams/bitstream.js";
import { checkRemovable } from "../../domain/bitstreams/decider.js";
import { isUuid } from "../../domain/shared/json.js";
import { DomainError, type CommandContext } from "../../domain/shared/types.js";
import { CatalogueUnavailableError, type BitstreamCatalogue } from "./port.js";

export const GLANCE_PROPERTIES = {
  functionId: "accel:function_id",
  functionName: "accel:function_name",
  regionType: "accel:region_type",
  vendor: "accel:vendor",
} as const satisfies Partial<Record<keyof BitstreamMetadata, string>>;

type Image = Record<string, unknown> & { id: string; name: string | null; status: string; size: number | null; created_at: string };

export interface GlanceOptions {
  url: string;
  token?: string;
  maxBytes: number;
  timeoutMs?: number;
}

export class GlanceCatalogue implements BitstreamCatalogue {
  readonly kind = "glance" as const;
  private readonly base: string;

  constructor(private readonly opts: GlanceOptions) {
    this.base = opts.url.replace(/\/+$/, "");
  }

  async get(id: string): Promise<Bitstream | null> {
    if (!isUuid(id)) return null;
    const res = await this.request("GET", `/v2/images/${id}`);
    if (res.status === 404) return null;
    return toBitstream((await this.json(res)) as Image);
  }

  async list(): Promise<Bitstream[]> {
    const out: Bitstream[] = [];
    let next: string | null = "/v2/images?limit=200&status=active&sort=created_at:asc";
    while (next) {
      const page = (await this.json(await this.request("GET", next))) as { images: Image[]; next?: string };
      for (const image of page.images) {
        const b = Object.values(GLANCE_PROPERTIES).some((p) => p in image || tagOf(image, p) !== null) ? toBitstream(image) : null;
        if (b) out.push(b);
      }
      next = page.next ?? null;
    }
    return out;
  }

  withFunction(functionId: string): Promise<Bitstream[]> {
    return this.withProperty("functionId", functionId);
  }

  withFunctionName(functionName: string): Promise<Bitstream[]> {
    return this.withProperty("functionName", functionName);
  }

  async named(name: string): Promise<Bitstream[]> {
    return (await this.list()).filter((b) => nameMatches(b.name, name));
  }

  /** Active images with the property, or the tag `<property>=<value>`, each once. */
  private async withProperty(field: "functionId" | "functionName", value: string): Promise<Bitstream[]> {
    const property = GLANCE_PROPERTIES[field];
    const query = async (filter: Record<string, string>) => {
      const q = new URLSearchParams({ ...filter, status: "active", limit: "200", sort: "created_at:asc" });
      return ((await this.json(await this.request("GET", `/v2/images?${q}`))) as { images: Image[] }).images;
    };
    const [byProperty, byTag] = await Promise.all([query({ [property]: value }), query({ tag: `${property}=${value}` })]);
    const seen = new Set<string>();
    return [...byProperty, ...byTag]
      .filter((image) => !seen.has(image.id) && seen.add(image.id))
      .map(toBitstream)
      .filter((b): b is Bitstream => b !== null && b[field] === value);
  }

  async add(_ctx: CommandContext, meta: BitstreamMetadata, content: Readable): Promise<Bitstream> {
    const body: Record<string, string> = { name: meta.name, disk_format: "raw", container_format: "bare" };
    for (const [field, property] of Object.entries(GLANCE_PROPERTIES)) {
      const v = meta[field as keyof typeof GLANCE_PROPERTIES];
      if (v !== null) body[property] = v;
    }
    const created = (await this.json(await this.request("POST", "/v2/images", JSON.stringify(body), "application/json"))) as Image;
    try {
      const sha512 = createHash("sha512");
      let size = 0;
      const max = this.opts.maxBytes;
      const meter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          if (size > max) return done(new DomainError("BAD_USER_INPUT", `the bitstream is larger than ${max} bytes (BITSTREAM_MAX_BYTES)`, "content"));
          sha512.update(chunk);
          done(null, chunk);
        },
      });
      const upload = await this.request("PUT", `/v2/images/${created.id}/file`, content.pipe(meter), "application/octet-stream").catch((err) => {
        throw meter.errored ?? err;
      });
      if (meter.errored) throw meter.errored;
      if (upload.status >= 300) throw new CatalogueUnavailableError(`Glance refused the upload of image ${created.id}: HTTP ${upload.status} ${await upload.text()}`);
      if (size === 0) throw new DomainError("BAD_USER_INPUT", "the bitstream is empty", "content");
      const stored = await this.get(created.id);
      const sent = `sha512:${sha512.digest("hex")}`;
      if (!stored || (stored.checksum.startsWith("sha512:") && stored.checksum !== sent)) {
        throw new CatalogueUnavailableError(`Glance stored image ${created.id} with another checksum than the one sent`);
      }
      return stored;
    } catch (err) {
      await this.request("DELETE", `/v2/images/${created.id}`).catch(() => undefined);
      throw err;
    }
  }

  async remove(_ctx: CommandContext, id: string, usedBy: readonly string[]): Promise<void> {
    checkRemovable(await this.get(id), id, usedBy);
    const res = await this.request("DELETE", `/v2/images/${id}`);
    if (res.status === 404) throw new DomainError("NOT_FOUND", `bitstream ${id} not found`, "id");
    if (res.status >= 300) throw new CatalogueUnavailableError(`Glance refused to delete image ${id}: HTTP ${res.status}`);
  }

  async open(id: string): Promise<Readable | null> {
    if (!isUuid(id)) return null;
    const res = await this.request("GET", `/v2/images/${id}/file`, undefined, undefined, false);
    if (res.status === 404 || res.status === 204 || !res.body) return null;
    if (res.status >= 300) throw new CatalogueUnavailableError(`Glance answered HTTP ${res.status} for the content of image ${id}`);
    return Readable.fromWeb(res.body as import("node:stream/web").ReadableStream);
  }

  /** `timeout`: for requests whose whole answer is small (not uploads and downloads of content). */
  private async request(method: string, path: string, body?: string | Readable, contentType?: string, timeout = body === undefined || typeof body === "string"): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.opts.token) headers["x-auth-token"] = this.opts.token;
    if (contentType) headers["content-type"] = contentType;
    const init: RequestInit & { duplex?: "half" } = { method, headers };
    if (typeof body === "string") init.body = body;
    else if (body) {
      init.body = Readable.toWeb(body) as unknown as RequestInit["body"];
      init.duplex = "half";
    }
    if (timeout) init.signal = AbortSignal.timeout(this.opts.timeoutMs ?? 30_000);
    try {
      return await fetch(`${this.base}${path}`, init);
    } catch (err) {
      throw new CatalogueUnavailableError(`cannot reach Glance at ${this.base}: ${String((err as Error).cause ?? (err as Error).message)}`);
    }
  }

  private async json(res: Response): Promise<unknown> {
    const text = await res.text();
    if (res.status >= 300) throw new CatalogueUnavailableError(`Glance answered HTTP ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }
}

/** An active image as a bitstream; null for one without content yet (queued, saving, killed...). */
function toBitstream(image: Image): Bitstream | null {
  if (image.status !== "active") return null;
  const algo = typeof image.os_hash_algo === "string" ? image.os_hash_algo : null;
  const value = typeof image.os_hash_value === "string" ? image.os_hash_value : null;
  const checksum = algo && value ? `${algo}:${value}` : typeof image.checksum === "string" ? `md5:${image.checksum}` : null;
  if (!checksum || !CHECKSUM_RE.test(checksum)) return null;
  const prop = (p: string) => (typeof image[p] === "string" && image[p] !== "" ? (image[p] as string) : tagOf(image, p));
  return {
    id: image.id,
    name: image.name ?? image.id,
    functionId: prop(GLANCE_PROPERTIES.functionId),
    functionName: prop(GLANCE_PROPERTIES.functionName),
    regionType: prop(GLANCE_PROPERTIES.regionType),
    vendor: prop(GLANCE_PROPERTIES.vendor),
    checksum,
    size: image.size ?? 0,
    createdAt: new Date(image.created_at).toISOString(),
  };
}

/** The value of a tag `<key>=<value>` of the image, if it has one (the first, in Glance's order). */
function tagOf(image: Image, key: string): string | null {
  if (!Array.isArray(image.tags)) return null;
  const prefix = `${key}=`;
  const tag = (image.tags as unknown[]).find((t): t is string => typeof t === "string" && t.startsWith(prefix) && t.length > prefix.length);
  return tag === undefined ? null : tag.slice(prefix.length);
}
