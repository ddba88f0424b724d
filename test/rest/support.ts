/** A REST client for the tests: Cyborg's headers, tokens by role, the error envelope unwrapped. */
import { TOKENS, type Who } from "../api/harness.js";

export interface RestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  /** The inner fault of an error envelope. */
  fault?: { faultcode: string; faultstring: string; debuginfo: null; code: string; field?: string };
}

export interface CallOptions {
  body?: unknown;
  /** Minor version of 2.x, "latest", or a raw header value with `raw`. */
  version?: number | "latest";
  headers?: Record<string, string>;
  /** X-Service-Token from this role. */
  serviceToken?: Who;
}

export function restClient(graphqlUrl: string) {
  const base = graphqlUrl.replace(/\/graphql$/, "");
  async function call(who: Who | null, method: string, path: string, opts: CallOptions = {}): Promise<RestResponse> {
    const headers: Record<string, string> = { ...opts.headers };
    if (who) headers["x-auth-token"] = TOKENS[who].token;
    if (opts.serviceToken) headers["x-service-token"] = TOKENS[opts.serviceToken].token;
    if (opts.version !== undefined) headers["openstack-api-version"] = `accelerator ${opts.version === "latest" ? "latest" : `2.${opts.version}`}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    }
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    const json = text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : undefined;
    const fault = json && typeof json.error_message === "string" ? JSON.parse(json.error_message) : undefined;
    return { status: res.status, headers: res.headers, text, json, fault };
  }
  return { base, call };
}

export const bindPatch = (arqUuids: string[], target: { hostname: string; rp: string; instance: string }) =>
  Object.fromEntries(
    arqUuids.map((u) => [
      u,
      [
        { op: "add", path: "/hostname", value: target.hostname },
        { op: "add", path: "/device_rp_uuid", value: target.rp },
        { op: "add", path: "/instance_uuid", value: target.instance },
      ],
    ]),
  );

export const unbindPatch = (arqUuids: string[]) =>
  Object.fromEntries(arqUuids.map((u) => [u, ["/hostname", "/instance_uuid", "/device_rp_uuid"].map((path) => ({ op: "remove", path }))]));
