/**
 * Authentication the OpenStack way, on the one token registry and policy of the GraphQL API:
 * `X-Auth-Token` names the caller; the compute service proves itself with a token that has the
 * `service` role, sent as `X-Service-Token` (Nova with send_service_user_token) or as the
 * `X-Auth-Token` itself (cyborg-reference 1.4). A request whose X-Auth-Token is not in the
 * registry (a Keystone user token Nova forwards) is accepted when a service X-Service-Token
 * vouches for it, and acts as that service. REST_AUTH=noauth (development only) makes every
 * request an admin of project "noauth" that also acts as the compute service.
 */
import type { IncomingMessage } from "node:http";
import { allows, type Rule } from "../auth/policy.js";
import type { Principal, TokenRegistry } from "../auth/tokens.js";
import { forbidden, RestError } from "./errors.js";

export type RestAuthMode = "keystone" | "noauth";

export interface Caller {
  /** Who acts: the X-Auth-Token's principal (project scoping and audit follow it). */
  principal: Principal;
  /** The request carries a token with the service role (either header). */
  actsAsService: boolean;
}

const NOAUTH: Caller = {
  principal: { principal: "noauth", roles: new Set(["admin", "service"]), projectId: "noauth", hostname: null },
  actsAsService: true,
};

export function authenticate(req: IncomingMessage, tokens: TokenRegistry, mode: RestAuthMode): Caller {
  if (mode === "noauth") return NOAUTH;
  const token = header(req, "x-auth-token");
  if (!token) throw new RestError("UNAUTHENTICATED", "The request you have made requires authentication: send X-Auth-Token.");
  const serviceToken = header(req, "x-service-token");
  const service = serviceToken ? tokens.lookup(serviceToken) : undefined;
  if (serviceToken && !service) throw new RestError("UNAUTHENTICATED", "The X-Service-Token is not a known token.");
  const serviceVouches = service !== undefined && allows(service, "arq:bind");
  const principal = tokens.lookup(token);
  if (!principal) {
    // Nova forwards the user's Keystone token, which cyborg-es cannot check: Nova's own service
    // token vouches for the request, which then acts as that service (no more than the service
    // token alone may do).
    if (serviceVouches) return { principal: service!, actsAsService: true };
    throw new RestError("UNAUTHENTICATED", "The X-Auth-Token is not a known token.");
  }
  return { principal, actsAsService: allows(principal, "arq:bind") || serviceVouches };
}

/** The policy table of auth/policy.ts, answered in Cyborg's words. */
export function authorize(caller: Caller, rule: Rule): void {
  if (!allows(caller.principal, rule)) {
    const roles = [...caller.principal.roles].join(", ");
    throw forbidden(`Access was denied to the following resource: ${rule} (your token's roles: ${roles}).`);
  }
}

/** Binding, unbinding and deleting by instance: Cyborg's hard-coded service-token check. */
export function requireServiceToken(caller: Caller, what: string): void {
  if (!caller.actsAsService) {
    throw forbidden(`This operation requires a service token: ${what} needs X-Service-Token (or X-Auth-Token) with a token that has the service role.`);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s?.trim() || undefined;
}
