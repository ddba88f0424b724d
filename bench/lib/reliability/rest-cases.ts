/**
 * Cyborg v2 REST requests generated from the router's own route table (src/api/rest/router.ts):
 * every resource and action, under each prefix, with the methods it takes and others; ids known,
 * random or broken (bad percent-encoding, huge); known and unknown query parameters; tokens of
 * every role, none, unknown, and service tokens; microversion headers valid and not; bodies shaped
 * as Cyborg's (profiles, ARQ creation, bind patches) with hostile values, and junk.
 */
import fc from "fast-check";
import { ROUTES } from "../../../src/api/rest/router.js";
import { expandDeep, hostileInt, hostileString, idFrom, nameFrom, profileGroups, wrongKind, type Pool } from "./hostile-values.js";
import { tokenFor, type Caller } from "./wire.js";
import { WHO } from "./tokens.js";

export interface RestCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

type G = fc.GeneratorValue;
const chance = (g: G, p: number) => g(fc.integer, { min: 0, max: 9_999 }) < p * 10_000;
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.integer, { min: 0, max: items.length - 1 })]!;

/** Percent-encodes the UTF-8 bytes (lone surrogates become U+FFFD, as a client's encoder would send). */
const encode = (s: string) => [...Buffer.from(s, "utf8")].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`)).join("");
/** Header values are bytes: printable ASCII only. */
const ascii = (s: string) => s.replace(/[^\x20-\x7e]/g, "?").slice(0, 8_000);

const PREFIXES = ["/v2", "/accelerator/v2", "/accelerator", ""];
const METHODS = ["GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"];
const PARAMS = ["instance", "bind_state", "name", "value", "arqs", "type", "vendor", "hostname", "filters.field", "filters.value", "deployable_id", "key", "limit", "marker", "sort_key", "sort_dir", "all_projects"];
const FILTER_FIELDS = ["parent_uuid", "name", "limit", "marker", "sort_key", "sort_dir", "instance_uuid", "nope"];

function segment(g: G, resource: string, pool: Pool): string {
  const known: Record<string, string[]> = {
    device_profiles: [...pool.profileUuids, ...pool.profileNames],
    accelerator_requests: pool.arqUuids,
    deployables: pool.deployableUuids,
    devices: pool.deviceUuids,
    attributes: pool.attributeUuids,
  };
  if (chance(g, 0.1)) return pick(g, ["%zz", "%", "%E0%A4%A", "%2F", "a%00b", "%20", "x".repeat(5_000)]);
  return encode(g(() => idFrom(known[resource] ?? [])).slice(0, chance(g, 0.05) ? undefined : 2_000));
}

function queryString(g: G, pool: Pool): string {
  if (!chance(g, 0.5)) return "";
  const n = g(fc.integer, { min: 1, max: 4 });
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = chance(g, 0.85) ? pick(g, PARAMS) : encode(g(() => hostileString).slice(0, 50));
    let value: string;
    if (key === "filters.field") value = pick(g, FILTER_FIELDS);
    else if (key === "bind_state") value = pick(g, ["resolved", "bound", "", "RESOLVED"]);
    else if (key === "arqs") value = g(fc.array, idFrom(pool.arqUuids), { minLength: 1, maxLength: chance(g, 0.05) ? 1_100 : 3 }).join(",");
    else if (key === "instance") value = g(() => idFrom(pool.instanceUuids));
    else if (key === "hostname") value = g(() => nameFrom(pool.hostnames));
    else value = chance(g, 0.3) ? String(g(() => hostileInt)) : g(() => hostileString).slice(0, chance(g, 0.05) ? undefined : 2_000);
    parts.push(`${key}=${encode(value)}`);
  }
  return `?${parts.join("&")}`;
}

function headers(g: G, who: Caller): Record<string, string> {
  const h: Record<string, string> = {};
  const token = tokenFor(who);
  if (token) h["x-auth-token"] = token;
  if (chance(g, 0.25)) h["x-service-token"] = pick(g, [tokenFor("service")!, tokenFor("member")!, tokenFor("unknown")!, ""]);
  if (chance(g, 0.5)) {
    h["openstack-api-version"] = ascii(
      pick(g, ["accelerator 2.0", "accelerator 2.1", "accelerator 2.2", "accelerator 2.3", "accelerator latest", "2.2", "accelerator 2.4", "accelerator 3.0", "accelerator -1.0", "compute 2.1", "accelerator 2.99999999999999999", "", g(() => hostileString)]),
    );
  }
  if (chance(g, 0.1)) h["x-correlation-id"] = ascii(g(() => hostileString));
  return h;
}

function bindOps(g: G, pool: Pool): unknown {
  const ops: unknown[] = [];
  const op = chance(g, 0.8) ? "add" : pick(g, ["remove", "replace", "", 5]);
  for (const path of g(fc.subarray, ["/hostname", "/device_rp_uuid", "/instance_uuid", "/project_id", "/nope", "hostname"], { minLength: 0, maxLength: 5 })) {
    const value = path === "/hostname" ? g(() => nameFrom(pool.hostnames)) : path.includes("uuid") ? g(() => idFrom([...pool.rpUuids, ...pool.instanceUuids])) : g(() => hostileString);
    ops.push(chance(g, 0.9) ? { op, path, value } : g(() => wrongKind));
  }
  return ops;
}

/** A body for the route: Cyborg's shape with hostile values, or anything. */
function body(g: G, route: string, method: string, pool: Pool): string | undefined {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return chance(g, 0.05) ? "junk" : undefined;
  const roll = g(fc.integer, { min: 0, max: 99 });
  if (roll < 8) return pick(g, ["", "{", "null", "[]", "{}", "\"x\"", "[{}]", "[[]]"]);
  if (roll < 12) return expandDeep(JSON.stringify(g(() => fc.jsonValue({ maxDepth: 3 }))));
  if (roll < 14) return expandDeep(JSON.stringify({ big: "x".repeat(g(fc.integer, { min: 100_000, max: 1_200_000 })) }));
  if (route.startsWith("device_profiles")) {
    const profile: Record<string, unknown> = { name: g(() => nameFrom(pool.profileNames)), groups: g(() => profileGroups) };
    if (chance(g, 0.3)) profile.description = g(() => hostileString);
    if (chance(g, 0.2)) profile.uuid = g(() => idFrom(pool.profileUuids));
    return expandDeep(JSON.stringify(chance(g, 0.85) ? [profile] : chance(g, 0.5) ? profile : [profile, profile]));
  }
  if (route.startsWith("accelerator_requests") && method === "POST") {
    const b: Record<string, unknown> = { device_profile_name: chance(g, 0.9) ? g(() => nameFrom(pool.profileNames)) : g(() => wrongKind) };
    if (chance(g, 0.3)) b.device_profile_group_id = chance(g, 0.5) ? g(() => hostileInt) : g(() => wrongKind);
    return expandDeep(JSON.stringify(b));
  }
  if (route.startsWith("accelerator_requests") && method === "PATCH") {
    const n = chance(g, 0.03) ? g(fc.integer, { min: 101, max: 130 }) : g(fc.integer, { min: 1, max: 3 });
    const patch: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) patch[g(() => idFrom(pool.arqUuids))] = bindOps(g, pool);
    return expandDeep(JSON.stringify(patch));
  }
  return expandDeep(JSON.stringify(g(() => fc.jsonValue({ maxDepth: 2 }))));
}

export function restCase(pool: Pool, callers: readonly Caller[] = [...WHO, null, "unknown"]): fc.Arbitrary<RestCase> {
  const routes = Object.entries(ROUTES).map(([path, methods]) => ({ path, methods: Object.keys(methods ?? {}) }));
  return fc.gen().map((g) => {
    const route = pick(g, routes);
    const method = chance(g, 0.85) ? pick(g, route.methods) : pick(g, METHODS);
    const [resource, , action] = route.path.split("/");
    let path = `${pick(g, PREFIXES)}/${resource}`;
    if (route.path.includes("*")) path += `/${segment(g, resource!, pool)}`;
    if (action) path += `/${action}`;
    if (chance(g, 0.03)) path += `/${encode(g(() => hostileString).slice(0, 30)) || "extra"}`;
    if (chance(g, 0.02)) path = `${pick(g, ["/accelerator", "/v2", "/accelerator/v2"])}/${encode(g(() => hostileString).slice(0, 30)) || "nope"}`;
    const h = headers(g, pick(g, callers));
    const b = body(g, route.path, method, pool);
    if (b !== undefined) h["content-type"] = chance(g, 0.95) ? "application/json" : pick(g, ["text/plain", "application/x-www-form-urlencoded", ""]);
    return { method, path: path + queryString(g, pool), headers: h, body: method === "GET" || method === "HEAD" ? undefined : b };
  });
}
