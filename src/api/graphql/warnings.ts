/**
 * Warnings in an answer that succeeded: what a resolver adds to `ctx.warnings` is sent as
 * `extensions.warnings` (a list of strings) beside `data`.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { normalisationWarnings, unreportedWarnings } from "../../domain/device-profiles/warnings.js";
import type { ProfileGroup } from "../../domain/device-profiles/events.js";
import { placementCandidates } from "../scheduling.js";
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
  // What the hosts report comes from the placement engine's candidates, kept by this process and
  // read again only where the models changed: not from a read of every provider of the fleet.
  const candidates = await placementCandidates(ctx.services.readStore).catch(() => undefined);
  if (!candidates) return void warnings.push("could not check which hosts report the groups' traits (the resource providers' read model is not ready): ask resourceProviders later");
  const reported = { traits: new Set<string>(), resourceClasses: new Set<string>() };
  for (const host of candidates.hosts) {
    for (const p of host.providers) {
      reported.resourceClasses.add(p.resourceClass);
      for (const t of p.traits) reported.traits.add(t);
    }
  }
  warnings.push(...unreportedWarnings(stored, reported));
}
