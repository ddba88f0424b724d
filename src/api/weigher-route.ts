/**
 * The weigher over plain HTTP, outside Cyborg's versioned API (docs/weigher.md), for the Nova
 * scheduler weigher of contrib/nova:
 *   GET /weigher/v1/hosts?device_profile=<name>[&host=<name>...]
 * answers {"device_profile": name, "hosts": [{hostname, weight, fits, free, ready, reason}]},
 * best first. It authenticates as the REST API does (X-Auth-Token, X-Service-Token; REST_AUTH) and
 * needs resource_provider:read (admin, manager, service), under the REST API's rate limit (an unknown
 * token's requests counted against its address); errors use the REST API's envelope.
 */
import type { TokenRegistry } from "./auth/tokens.js";
import type { HttpRoute } from "./http-server.js";
import type { Logger } from "../infra/logger.js";
import type { ReadStore } from "../infra/readstore/port.js";
import type { RateLimit } from "./rate-limit.js";
import { authenticate, authorize, type RestAuthMode } from "./rest/auth.js";
import { badRequest, envelope, fromCommandError, INTERNAL, RestError } from "./rest/errors.js";
import { limited } from "./rest/router.js";
import { hostWeights } from "./weigher.js";

export const WEIGHER_PATH = "/weigher/v1/hosts";

export function weigherRoute(deps: { readStore: ReadStore; tokens: TokenRegistry; auth: RestAuthMode; log: Logger; rateLimit?: RateLimit }): HttpRoute {
  return async (req, res, pathname, search) => {
    if (pathname !== WEIGHER_PATH) return false;
    let status = 200;
    let body: string;
    try {
      if (req.method !== "GET") throw new RestError("METHOD_NOT_ALLOWED", `${WEIGHER_PATH} answers GET only`);
      const caller = await limited(() => authenticate(req, deps.tokens, deps.auth), req, deps.rateLimit);
      authorize(caller, "resource_provider:read");
      const q = new URLSearchParams(search);
      const profile = q.get("device_profile");
      if (!profile) throw badRequest("name the device profile to weigh hosts for: ?device_profile=<name> (the flavor's accel:device_profile)", "device_profile");
      const hosts = q.getAll("host");
      const weights = await hostWeights(deps.readStore, profile, hosts.length ? hosts : null);
      body = JSON.stringify({ device_profile: profile, hosts: weights });
    } catch (err) {
      const known = fromCommandError(err);
      if (!known) deps.log.error({ err, path: pathname }, "internal error in a weigher request");
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
