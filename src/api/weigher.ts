/**
 * The weigher's read side, shared by GraphQL (hostWeights) and the weigher's HTTP path
 * (weigher-route.ts): the profile and the hosts' resource providers from the read models, ranked
 * by the domain's weighHosts.
 */
import { getProfileByName } from "../../projections/device-profiles/queries.js";
import { listResourceProviders, type ResourceProviderView } from "../../projections/resource-providers/queries.js";
import { weighHosts, type HostWeight } from "../domain/inventory/weigher.js";
import { DomainError } from "../domain/shared/types.js";
import type { ReadStore } from "../infra/readstore/port.js";

/** Hosts one call may name (Nova hands the weigher the hosts its filters kept). */
export const MAX_WEIGHED_HOSTS = 1000;

/** `hosts`: the hosts to weigh, in any order (each answered, a host with no provider as not fitting); none: every host with providers. */
export async function hostWeights(store: ReadStore, deviceProfileName: string, hosts?: readonly string[] | null): Promise<HostWeight[]> {
  if (hosts && hosts.length > MAX_WEIGHED_HOSTS) throw new DomainError("BAD_USER_INPUT", `at most ${MAX_WEIGHED_HOSTS} hosts per call, got ${hosts.length}`, "hosts");
  const profile = await getProfileByName(store, deviceProfileName);
  if (!profile) throw new DomainError("NOT_FOUND", `no device profile named ${JSON.stringify(deviceProfileName)}`, "deviceProfileName");
  const byHost = new Map<string, ResourceProviderView[]>();
  if (hosts) {
    const named = [...new Set(hosts)];
    const lists = await Promise.all(named.map((h) => listResourceProviders(store, h)));
    named.forEach((h, i) => byHost.set(h, lists[i]!));
  } else {
    for (const rp of await listResourceProviders(store)) byHost.set(rp.parentProviderName, [...(byHost.get(rp.parentProviderName) ?? []), rp]);
  }
  return weighHosts(profile.groups, byHost);
}
