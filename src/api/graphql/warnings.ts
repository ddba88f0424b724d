/**
 * Warnings in an answer that succeeded: what a resolver adds to `ctx.warnings` is sent as
 * `extensions.warnings` (a list of strings) beside `data`.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { listResourceProviders } from "../../../projections/resource-providers/queries.js";
import { normalisationWarnings, unreportedWarnings } from "../../domain/device-profiles/warnings.js";
import type { ProfileGroup } from "../../domain/device-profiles/events.js";
import type { ApiContext } from "./context.js";

export const warningsPlugin: ApolloServerPlugin<ApiContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ contextValue, response }) {
        if (response.body.kind === "single") withWarnings(response.body.singleResult, contextValue);
      },
    };
  },
};

/** Puts the request's warnings, if any, into the answer's extensions. */
export function withWarnings(result: { extensions?: Record<string, unknown> }, ctx: ApiContext): void {
  const warnings = ctx.warnings;
  if (warnings?.length) result.extensions = { ...result.extensions, warnings };
}

/** A profile's groups as sent and as stored: what was rewritten, and what no host reports. */
export async function warnAboutGroups(ctx: ApiContext, sent: unknown, stored: readonly ProfileGroup[]): Promise<void> {
  const warnings = (ctx.warnings ??= []);
  warnings.push(...normalisationWarnings(sent, stored));
  // The profile is written by now: a read model being rebuilt costs the check, not the answer.
  const rps = await listResourceProviders(ctx.services.readStore).catch(() => undefined);
  if (!rps) return void warnings.push("could not check which hosts report the groups' traits (the resource providers' read model is not ready): ask resourceProviders later");
  const reported = { traits: new Set(rps.flatMap((rp) => rp.traits)), resourceClasses: new Set(rps.map((rp) => rp.resourceClass)) };
  warnings.push(...unreportedWarnings(stored, reported));
}
