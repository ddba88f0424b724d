/**
 * The roles that follow the event log for the outside world, each from its own checkpoint:
 * `placement` (keeps OpenStack Placement matching the inventory) and `nova` (sends Nova
 * accelerator-request-bound). Their status is shown on /readyz under `followers`.
 */
import type { Config } from "../infra/config.js";
import type { EventStore } from "../infra/eventstore/port.js";
import type { FollowerStatus } from "./follower/status.js";
import type { Logger } from "../infra/logger.js";
import { startNovaNotifier, type NovaNotifier, type NovaNotifierOptions } from "./nova/notifier.js";
import { startPlacementSync, type PlacementSync } from "./placement/sync.js";
import type { ReadStore } from "../infra/readstore/port.js";

export interface Followers {
  placement: PlacementSync | undefined;
  nova: NovaNotifier | undefined;
  status(): FollowerStatus[];
  stop(): Promise<void>;
}

export async function startFollowers(o: { store: EventStore; readStore: ReadStore; config: Config; log: Logger; nova?: NovaNotifierOptions["tuning"] }): Promise<Followers> {
  const { store, readStore, config, log } = o;
  let placement: PlacementSync | undefined;
  let nova: NovaNotifier | undefined;
  const stop = async () => {
    await nova?.stop();
    await placement?.stop();
  };
  try {
    if (config.roles.has("placement")) placement = await startPlacementSync({ store, readStore, config, log });
    if (config.roles.has("nova")) nova = await startNovaNotifier({ store, readStore, config, log, tuning: o.nova });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    placement,
    nova,
    status: () => [...(placement ? [placement.status()] : []), ...(nova ? [nova.status()] : [])],
    stop,
  };
}
