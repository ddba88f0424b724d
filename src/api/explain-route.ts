/**
 * The placement engine's explanation over plain HTTP, outside Cyborg's versioned API
 * (docs/scheduling.md):
 *   GET /explain/v1/device-profiles/<name>[?host=<name>...][&detail=<n>]
 * answers the explanation as GraphQL's explainPlacement does ({hosts, fitting, byRule, detail}).
 * It authenticates as the REST API does and needs resource_provider:read, under the REST API's
 * rate limit; errors use the REST API's envelope.
 */
import type { ReadStore } from "../infra/readstore/port.js";
import type { HttpRoute } from "./http-server.js";
import { badRequest } from "./rest/errors.js";
import { restGetRoute, type RestGetDeps } from "./rest-get-route.js";
import { explainPlacement } from "./scheduling.js";

export const EXPLAIN_PREFIX = "/explain/v1/device-profiles/";

export function explainRoute(deps: RestGetDeps & { readStore: ReadStore; stale: (hostname: string) => boolean }): HttpRoute {
  return restGetRoute(deps, {
    path: `${EXPLAIN_PREFIX}<name>`,
    what: "an explain request",
    matches: (pathname) => pathname.startsWith(EXPLAIN_PREFIX),
    answer: async (pathname, search) => {
      const name = decodeURIComponent(pathname.slice(EXPLAIN_PREFIX.length));
      if (!name || name.includes("/")) throw badRequest(`name one device profile: ${EXPLAIN_PREFIX}<name>`, "device_profile");
      const q = new URLSearchParams(search);
      const hosts = q.getAll("host");
      const detail = q.has("detail") ? Number(q.get("detail")) : 20;
      if (!Number.isInteger(detail) || detail < 0) throw badRequest("detail is a whole number of hosts (0 to 200)", "detail");
      return explainPlacement(deps.readStore, deps.stale, { deviceProfileName: name }, { hosts: hosts.length ? hosts : null }, detail);
    },
  });
}
