/**
 * The weigher over plain HTTP, outside Cyborg's versioned API (docs/weigher.md), for the Nova
 * scheduler weigher of contrib/nova:
 *   GET /weigher/v1/hosts?device_profile=<name>[&host=<name>...]
 * answers {"device_profile": name, "hosts": [{hostname, weight, fits, free, ready, reason}]},
 * best first. It authenticates as the REST API does (X-Auth-Token, X-Service-Token; REST_AUTH) and
 * needs resource_provider:read (admin, manager, service), under the REST API's rate limit (an unknown
 * token's requests counted against its address); errors use the REST API's envelope.
 */
import type { ReadStore } from "../infra/readstore/port.js";
import type { HttpRoute } from "./http-server.js";
import { badRequest } from "./rest/errors.js";
import { restGetRoute, type RestGetDeps } from "./rest-get-route.js";
import { hostWeights } from "./weigher.js";

export const WEIGHER_PATH = "/weigher/v1/hosts";

export function weigherRoute(deps: RestGetDeps & { readStore: ReadStore }): HttpRoute {
  return restGetRoute(deps, {
    path: WEIGHER_PATH,
    what: "a weigher request",
    matches: (pathname) => pathname === WEIGHER_PATH,
    answer: async (_pathname, search) => {
      const q = new URLSearchParams(search);
      const profile = q.get("device_profile");
      if (!profile) throw badRequest("name the device profile to weigh hosts for: ?device_profile=<name> (the flavor's accel:device_profile)", "device_profile");
      const hosts = q.getAll("host");
      return { device_profile: profile, hosts: await hostWeights(deps.readStore, profile, hosts.length ? hosts : null) };
    },
  });
}
