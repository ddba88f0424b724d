/**
 * The REST API's rows of the policy table: for each route and method of the router (and the
 * argument-level rules: delete by instance, /project_id in a bind), the rule it is guarded by,
 * and a well-formed request that reaches the guard.
 */
import { randomUUID } from "node:crypto";
import type { Rule } from "../../src/api/auth/policy.js";
import { tokenFor, type Caller } from "../../bench/lib/reliability/wire.js";

/** "service-token": Cyborg's hard-coded check, a token with the service role (the rule arq:bind). */
export const REST_RULES: Record<string, Rule | "service-token"> = {
  "GET device_profiles": "device_profile:read",
  "POST device_profiles": "device_profile:write",
  "DELETE device_profiles": "device_profile:write",
  "GET device_profiles/*": "device_profile:read",
  "DELETE device_profiles/*": "device_profile:write",
  "GET accelerator_requests": "arq:read",
  "POST accelerator_requests": "arq:create",
  "PATCH accelerator_requests": "service-token",
  "DELETE accelerator_requests": "arq:delete",
  "DELETE accelerator_requests?instance": "service-token",
  "PATCH accelerator_requests /project_id, with a service token": "arq:bind_project",
  "GET accelerator_requests/*": "arq:read",
  "PATCH accelerator_requests/*": "service-token",
  "DELETE accelerator_requests/*": "arq:delete",
  "GET deployables": "hardware:read",
  "GET deployables/*": "hardware:read",
  "PATCH deployables/*/program": "deployable:program",
  "GET devices": "hardware:read",
  "GET devices/*": "hardware:read",
  "POST devices/*/enable": "device:status",
  "POST devices/*/disable": "device:status",
  "GET attributes": "hardware:read",
  "POST attributes": "attribute:write",
  "GET attributes/*": "hardware:read",
  "DELETE attributes/*": "attribute:write",
};

const bindOps = () => [
  { op: "add", path: "/hostname", value: "compute1" },
  { op: "add", path: "/device_rp_uuid", value: randomUUID() },
  { op: "add", path: "/instance_uuid", value: randomUUID() },
];

export function restRequest(key: string, who: Caller): { method: string; path: string; headers: Record<string, string>; body?: string } {
  const [method, rest] = [key.slice(0, key.indexOf(" ")), key.slice(key.indexOf(" ") + 1)];
  const id = randomUUID();
  const headers: Record<string, string> = { "content-type": "application/json" };
  const token = tokenFor(who);
  if (token) headers["x-auth-token"] = token;
  let route = rest.split(/[? ]/)[0]!;
  let query = "";
  let body: unknown;
  if (rest.startsWith("accelerator_requests /project_id")) {
    if (token) headers["x-service-token"] = tokenFor("service")!;
    headers["openstack-api-version"] = "accelerator 2.1";
    body = { [id]: [...bindOps(), { op: "add", path: "/project_id", value: "p-other" }] };
  } else if (method === "PATCH" && route === "accelerator_requests") body = { [id]: bindOps() };
  else if (method === "PATCH" && route === "accelerator_requests/*") body = { [id]: bindOps() };
  else if (method === "POST" && route === "device_profiles") body = [{ name: `r-${id.slice(0, 8)}`, groups: [{ "resources:FPGA": "1" }] }];
  else if (method === "POST" && route === "accelerator_requests") body = { device_profile_name: "matrix-1" };
  else if (method === "POST" && route === "attributes") body = { deployable_id: id, key: "rc", value: "FPGA" };
  if (method === "DELETE" && route === "device_profiles") query = `?value=no-such-${id.slice(0, 8)}`;
  if (method === "DELETE" && route === "accelerator_requests") query = rest.includes("?instance") ? `?instance=${id}` : `?arqs=${id}`;
  route = route.replace("*", id);
  return { method, path: `/v2/${route}${query}`, headers, body: body === undefined ? undefined : JSON.stringify(body) };
}
