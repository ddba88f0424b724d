/**
 * The Cyborg v2 REST API on the GraphQL server's port: `/` (versions), `/v2/...`, the same under
 * `/accelerator` (the prefix Cyborg's links and service catalogues use), and resource paths
 * without a version (Cyborg's root adds `v2`). It owns translation only: paths, microversions,
 * authentication, status codes and shapes; commands go to the Application the resolvers use and
 * reads through reads.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../infra/logger.js";
import type { TokenRegistry } from "../auth/tokens.js";
import type { ApiServices } from "../services.js";
import { createArqs, deleteArqs, listArqs, patchArqs, showArq } from "./accelerator-requests.js";
import { listAttributes, showAttribute, writeAttribute } from "./attributes.js";
import { rateLimitedMessage, type RateLimit } from "../rate-limit.js";
import { afterCatchUp } from "../read-your-writes.js";
import { authenticate, type Caller, type RestAuthMode } from "./auth.js";
import { commandFor, Query, type RestContext, type RestResult } from "./context.js";
import { listDeployables, programDeployable, showDeployable } from "./deployables.js";
import { createDeviceProfile, deleteDeviceProfiles, listDeviceProfiles, showDeviceProfile } from "./device-profiles.js";
import { listDevices, setDeviceStatus, showDevice } from "./devices.js";
import { badRequest, envelope, fromCommandError, INTERNAL, notFound, RestError } from "./errors.js";
import { negotiate, RANGE_HEADERS, versionHeader } from "./microversion.js";
import { RestReads } from "./reads.js";
import { rootDocument, v2Document } from "./versions.js";

export interface RestOptions {
  services: ApiServices;
  tokens: TokenRegistry;
  log: Logger;
  auth: RestAuthMode;
  /** The request body, or undefined past the size limit. */
  readBody(req: IncomingMessage): Promise<string | undefined>;
  maxBodyBytes: number;
  rateLimit?: RateLimit;
}

type Handler = (ctx: RestContext, param: string) => Promise<RestResult>;

/** Routes by resource, then `*` for the uuid (or name) segment, then the action. */
export const ROUTES: Readonly<Record<string, Partial<Record<string, Handler>>>> = {
  device_profiles: { GET: listDeviceProfiles, POST: createDeviceProfile, DELETE: (ctx) => deleteDeviceProfiles(ctx) },
  "device_profiles/*": { GET: showDeviceProfile, DELETE: deleteDeviceProfiles },
  accelerator_requests: { GET: listArqs, POST: createArqs, PATCH: (ctx) => patchArqs(ctx), DELETE: (ctx) => deleteArqs(ctx) },
  "accelerator_requests/*": { GET: showArq, PATCH: patchArqs, DELETE: deleteArqs },
  deployables: { GET: listDeployables },
  "deployables/*": { GET: showDeployable },
  "deployables/*/program": { PATCH: programDeployable },
  devices: { GET: listDevices },
  "devices/*": { GET: showDevice },
  "devices/*/enable": { POST: setDeviceStatus("ENABLED") },
  "devices/*/disable": { POST: setDeviceStatus("MAINTAINING") },
  attributes: { GET: listAttributes, POST: writeAttribute },
  "attributes/*": { GET: showAttribute, DELETE: writeAttribute },
};
const WRITES = new Set(["POST", "PATCH", "DELETE"]);
const RESOURCES = new Set(Object.keys(ROUTES).filter((k) => !k.includes("/")));

/** Answers the request and returns true when the path is the REST API's; false leaves it to the caller. */
export type RestRouter = (req: IncomingMessage, res: ServerResponse, pathname: string, search: string) => Promise<boolean>;

export function createRestRouter(opts: RestOptions): RestRouter {
  const reads = new RestReads(opts.services.readStore);
  const metrics = opts.services.metrics;
  // Each answered request is counted by its route template (never its path: ids stay out of labels).
  if (metrics) {
    return async (req, res, pathname, search) => {
      const t0 = performance.now();
      if (!(await answer(req, res, pathname, search))) return false;
      metrics.restOperation(template(pathname), req.method ?? "GET", res.statusCode, (performance.now() - t0) / 1000);
      return true;
    };
  }
  return answer;

  async function answer(req: IncomingMessage, res: ServerResponse, pathname: string, search: string): Promise<boolean> {
    const prefixed = pathname === "/accelerator" || pathname.startsWith("/accelerator/");
    const segments = (prefixed ? pathname.slice("/accelerator".length) : pathname).split("/").filter(Boolean);
    const versioned = segments[0] === "v2";
    if (versioned) segments.shift();
    else if (segments.length > 0 && !RESOURCES.has(segments[0]!)) {
      if (!prefixed) return false;
      send(res, new RestError("NOT_FOUND", `No such path ${pathname}: the API is at /v2 (or /accelerator/v2).`));
      return true;
    }
    const publicUrl = publicUrlOf(req);
    if (!versioned && segments.length === 0) {
      if (req.method !== "GET" && req.method !== "HEAD") send(res, methodNotAllowed("GET"));
      else send(res, { status: 200, body: rootDocument(publicUrl) });
      return true;
    }

    const headers: Record<string, string> = { ...RANGE_HEADERS };
    try {
      const version = negotiate(req.headers["openstack-api-version"]);
      Object.assign(headers, versionHeader(version));
      if (segments.length === 0) {
        if (req.method !== "GET" && req.method !== "HEAD") throw methodNotAllowed("GET");
        send(res, { status: 200, body: v2Document(publicUrl) }, headers);
        return true;
      }
      const { handler, param } = route(req.method ?? "GET", segments, pathname);
      const caller = await limited(() => authenticate(req, opts.tokens, opts.auth), req, opts.rateLimit);
      // The body is read once: the idempotency key's fingerprint and the handler share it.
      let raw: Promise<string | undefined> | undefined;
      const rawBody = () => (raw ??= opts.readBody(req));
      const ctx: RestContext = {
        caller,
        version,
        publicUrl,
        query: new Query(new URLSearchParams(search)),
        services: opts.services,
        reads,
        body: () => rawBody().then((text) => parseJson(text, opts)),
        command: () => commandFor(opts.services, caller, req),
      };
      const key = req.headers["idempotency-key"];
      const keyed = key !== undefined && req.method !== "GET" && req.method !== "HEAD";
      send(res, keyed ? await underKey(ctx, handler, param, { key, method: req.method!, pathname, search, body: await rawBody() }) : await handler(ctx, param), headers);
    } catch (err) {
      const known = fromCommandError(err);
      if (!known) opts.log.error({ err, method: req.method, path: pathname }, "internal error in a REST request");
      const e = known ?? INTERNAL;
      if (e.code === "PAYLOAD_TOO_LARGE") res.setHeader("connection", "close");
      send(res, e, { ...headers, ...e.headers });
    }
    return true;
  }
}

/** "/v2/accelerator_requests/{id}" for /accelerator/v2/accelerator_requests/<uuid>; "other" off the route table. */
function template(pathname: string): string {
  const segments = pathname.split("/").filter(Boolean);
  if (segments[0] === "accelerator") segments.shift();
  if (segments[0] === "v2") segments.shift();
  const [resource, id, action, ...rest] = segments;
  if (resource === undefined) return pathname.includes("v2") ? "/v2" : "/";
  const key = [resource, id === undefined ? undefined : "*", action].filter((s) => s !== undefined).join("/");
  return rest.length === 0 && Object.hasOwn(ROUTES, key) ? `/v2/${key.replace("*", "{id}")}` : "other";
}

/**
 * A POST, PATCH or DELETE with an `Idempotency-Key` header runs under the key (Application.idempotent):
 * a retry after a lost answer gets the first answer (status, body) and writes nothing.
 */
async function underKey(ctx: RestContext, handler: Handler, param: string, r: { key: string | string[]; method: string; pathname: string; search: string; body: string | undefined }): Promise<RestResult> {
  const operation = `${r.method} ${r.pathname}`;
  const request = { operation, search: r.search, body: r.body ?? null };
  const key = Array.isArray(r.key) ? r.key.join(",") : r.key;
  const { answer } = await ctx.services.app.idempotent(ctx.command(), { key, operation, request, ttlMs: ctx.services.idempotencyTtlMs }, (app, keyed) =>
    handler({ ...ctx, services: { ...ctx.services, app }, command: () => ({ ...ctx.command(), resuming: keyed.resuming }) }, param),
  );
  return answer;
}

/** Authenticates, then counts the request against the caller's rate limit (an unknown token's against its address). */
export async function limited(auth: () => Caller, req: IncomingMessage, limit: RateLimit | undefined): Promise<Caller> {
  let caller: Caller | undefined;
  try {
    caller = auth();
  } finally {
    const refused = await limit?.take(caller?.principal, req.socket.remoteAddress);
    if (refused) throw new RestError("RATE_LIMITED", rateLimitedMessage(refused), undefined, { "retry-after": String(refused.retryAfterS) });
  }
  return caller;
}

/** The handler of the path and method; a write answers once the read models show it (../read-your-writes.ts). */
function route(method: string, segments: string[], pathname: string): { handler: Handler; param: string } {
  const [resource, id, action, ...rest] = segments;
  const key = [resource, id === undefined ? undefined : "*", action].filter((s) => s !== undefined).join("/");
  const methods = rest.length === 0 ? ROUTES[key] : undefined;
  if (!methods || !Object.hasOwn(ROUTES, key)) throw notFound(`No such resource ${pathname}.`);
  const found = methods[method === "HEAD" ? "GET" : method];
  if (!found) throw methodNotAllowed(Object.keys(methods).join(", "));
  const handler: Handler = WRITES.has(method) ? (ctx, p) => afterCatchUp(() => ctx.services.catchUp(), () => found(ctx, p)) : found;
  let param = "";
  if (id !== undefined) {
    try {
      param = decodeURIComponent(id);
    } catch {
      throw badRequest(`The path segment ${JSON.stringify(id)} is not valid percent-encoding.`);
    }
  }
  return { handler, param };
}

function parseJson(raw: string | undefined, opts: RestOptions): unknown {
  if (raw === undefined) throw new RestError("PAYLOAD_TOO_LARGE", `The request body exceeds ${opts.maxBodyBytes} bytes (MAX_BODY_BYTES).`);
  if (raw.length === 0) throw badRequest("The request needs a JSON body.");
  try {
    return JSON.parse(raw);
  } catch {
    throw badRequest("The request body is not valid JSON.");
  }
}

const methodNotAllowed = (allow: string) => new RestError("METHOD_NOT_ALLOWED", `The method is not allowed here; allowed: ${allow}.`, undefined, { Allow: allow });

/** Cyborg's public_url when [api]public_endpoint is unset: the scheme and host the client used. */
function publicUrlOf(req: IncomingMessage): string {
  const host = req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`;
  return `http://${host}`;
}

function send(res: ServerResponse, r: RestResult | RestError, headers: Record<string, string> = {}): void {
  // One writeHead with every header: cheaper than a setHeader per header.
  const all: Record<string, string | number> = { ...headers };
  let body: string | undefined;
  if (r instanceof RestError) body = envelope(r);
  else {
    Object.assign(all, r.headers);
    if (r.body !== undefined) body = JSON.stringify(r.body);
  }
  if (body === undefined) all["content-length"] = 0;
  else {
    all["content-type"] = "application/json";
    all["content-length"] = Buffer.byteLength(body);
  }
  res.writeHead(r.status, all);
  res.end(body);
}
