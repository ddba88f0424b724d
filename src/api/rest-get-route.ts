/**
 * A read-only JSON route outside Cyborg's versioned API (the weigher, the placement engine's
 * explanation): GET only, authenticated as the REST API is and under its rate limit, needing
 * resource_provider:read; errors in the REST API's envelope.
 */
import type { TokenRegistry } from "./auth/tokens.js";
import type { HttpRoute } from "./http-server.js";
import type { Logger } from "../infra/logger.js";
import type { RateLimit } from "./rate-limit.js";
import { authenticate, authorize, type RestAuthMode } from "./rest/auth.js";
import { envelope, fromCommandError, INTERNAL, RestError } from "./rest/errors.js";
import { limited } from "./rest/router.js";

export interface RestGetDeps {
  tokens: TokenRegistry;
  auth: RestAuthMode;
  log: Logger;
  rateLimit?: RateLimit;
}

/** `matches` picks the paths it serves; `answer` gives the JSON body (throwing a RestError for bad input). `path` and `what` name it in messages. */
export function restGetRoute(deps: RestGetDeps, o: { path: string; what: string; matches: (pathname: string) => boolean; answer: (pathname: string, search: string) => Promise<unknown> }): HttpRoute {
  return async (req, res, pathname, search) => {
    if (!o.matches(pathname)) return false;
    let status = 200;
    let body: string;
    try {
      if (req.method !== "GET") throw new RestError("METHOD_NOT_ALLOWED", `${o.path} answers GET only`);
      const caller = await limited(() => authenticate(req, deps.tokens, deps.auth), req, deps.rateLimit);
      authorize(caller, "resource_provider:read");
      body = JSON.stringify(await o.answer(pathname, search));
    } catch (err) {
      const known = fromCommandError(err);
      if (!known) deps.log.error({ err, path: pathname }, `internal error in ${o.what}`);
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
