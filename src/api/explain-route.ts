/**
 * The placement engine's explanation over plain HTTP, outside Cyborg's versioned API
 * (docs/scheduling.md):
 *   GET /explain/v1/device-profiles/<name>[?host=<name>...][&detail=<n>]
 * answers the explanation as GraphQL's explainPlacement does ({hosts, fitting, byRule, detail}).
 * It authenticates as the REST API does and needs resource_provider:read, under the REST API's
 * rate limit; errors use the REST API's envelope.
 */
import type { TokenRegistry } from "./auth/tokens.js";
import type { HttpRoute } from "./http-server.js";
import type { Logger } from "../infra/logger.js";
import type { ReadStore } from "../infra/readstore/port.js";
import type { RateLimit } from "./rate-limit.js";
import { authenticate, authorize, type RestAuthMode } from "./rest/auth.js";
import { badRequest, envelope, fromCommandError, INTERNAL, RestError } from "./rest/errors.js";
import { limited } from "./rest/router.js";
import { explainPlacement } from "./scheduling.js";

export const EXPLAIN_PREFIX = "/explain/v1/device-profiles/";

export function explainRoute(deps: { readStore: ReadStore; tokens: TokenRegistry; auth: RestAuthMode; log: Logger; rateLimit?: RateLimit; stale: (hostname: string) => boolean }): HttpRoute {
  return async (req, res, pathname, search) => {
    if (!pathname.startsWith(EXPLAIN_PREFIX)) return false;
    let status = 200;
    let body: string;
    try {
      if (req.method !== "GET") throw new RestError("METHOD_NOT_ALLOWED", `${EXPLAIN_PREFIX}<name> answers GET only`);
      const caller = await limited(() => authenticate(req, deps.tokens, deps.auth), req, deps.rateLimit);
      authorize(caller, "resource_provider:read");
      const name = decodeURIComponent(pathname.slice(EXPLAIN_PREFIX.length));
      if (!name || name.includes("/")) throw badRequest(`name one device profile: ${EXPLAIN_PREFIX}<name>`, "device_profile");
      const q = new URLSearchParams(search);
      const hosts = q.getAll("host");
      const detail = q.has("detail") ? Number(q.get("detail")) : 20;
      if (!Number.isInteger(detail) || detail < 0) throw badRequest("detail is a whole number of hosts (0 to 200)", "detail");
      body = JSON.stringify(await explainPlacement(deps.readStore, deps.stale, { deviceProfileName: name }, { hosts: hosts.length ? hosts : null }, detail));
    } catch (err) {
      const known = fromCommandError(err);
      if (!known) deps.log.error({ err, path: pathname }, "internal error in an explain request");
      const e = known ?? INTERNAL;
      status = e.status;
      body = envelope(e);
      for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
      if (e.code === "METHOD_NOT_ALLOWED") res.setHeader("allow", "GET");
    }
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
    return true;
  };
}
