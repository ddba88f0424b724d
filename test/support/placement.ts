/**
 * A throwaway Placement for the tests that need the real one (bench/lib/placement-server.ts starts
 * it: Debian's placement-api, sqlite, noauth2, a free loopback port, stopped by its PID), plus a
 * raw client for checking what Placement holds through its own API. The packages are checked
 * (and installed if possible) by global-setup.ts.
 */
import { startPlacementServer, type PlacementServer } from "../../bench/lib/placement-server.js";

export type { PlacementServer };
export { startPlacementServer };

/** Placement's own API, as a scheduler or an operator reads it. */
export function placementApi(server: Pick<PlacementServer, "url" | "token">, microversion = "1.39") {
  const headers = { "x-auth-token": server.token, "openstack-api-version": `placement ${microversion}`, "content-type": "application/json" };
  async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }
  const get = async <T>(path: string): Promise<T> => {
    const r = await call<T>("GET", path);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return { call, get };
}
