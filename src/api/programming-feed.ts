/**
 * Requests for the agents' subscriptions (programmingRequests, agentRequests): one follower of the
 * event log per API process, from the head at its start, routing RegionProgrammingRequested,
 * DeviceCleaningRequested, PartitionCreationRequested and PartitionDestructionRequested to the subscriptions of that host. It needs neither a projector nor pub/sub, so every API replica
 * serves its agents alone; requests made before a subscription are read from the host's stream.
 * A lost subscription to the log is opened again after the last request it routed
 * (ResumingSubscription): the agents' subscriptions stay open and miss nothing.
 */
import type { EventStore } from "../infra/eventstore/port.js";
import type { Logger } from "../infra/logger.js";
import { ResumingSubscription } from "../reactors/follower/resuming-subscription.js";
import { subscriptionStatus, type FollowerStatus } from "../reactors/follower/status.js";
import { KeyedFanout } from "./keyed-fanout.js";

export class ProgrammingFeed {
  private started?: Promise<void>;
  private sub?: ResumingSubscription;
  private loop?: Promise<void>;
  /** Request ids, by host. */
  private readonly byHost = new KeyedFanout<string>();

  constructor(
    private readonly store: EventStore,
    private readonly log: Logger,
  ) {}

  /** Request ids made on this host from now on; `ready` resolves once none can be missed. */
  listen(hostname: string): { ready: Promise<void>; events: AsyncIterable<string>; close(): void } {
    const ready = this.start();
    return { ready, ...this.byHost.listen([hostname], ready) };
  }

  get listening(): number {
    return this.byHost.listening;
  }

  /** The feed as a follower of the log (/readyz `followers`); "stopped" until an agent first listens. */
  status(): FollowerStatus {
    return subscriptionStatus("programming-feed", this.sub, true);
  }

  async close(): Promise<void> {
    await this.sub?.close();
    await this.loop;
  }

  private start(): Promise<void> {
    this.started ??= this.follow().catch((err) => {
      // The next listener tries again (the subscriptions waiting on this one fail with the error).
      this.started = undefined;
      throw err;
    });
    return this.started;
  }

  private async follow(): Promise<void> {
    const after = await this.store.headPosition();
    // Every kind of request travels to the agent's connection: programming a region, cleaning a device, making or destroying a partition.
    const filter = { eventTypes: ["RegionProgrammingRequested", "DeviceCleaningRequested", "PartitionCreationRequested", "PartitionDestructionRequested"], streamPrefixes: ["host-"] };
    const sub = (this.sub = new ResumingSubscription({ name: "programming-feed", events: this.store, after, filter, log: this.log }));
    this.loop = (async () => {
      for await (const e of sub) {
        const { hostname, requestId } = e.data as { hostname: string; requestId: string };
        this.byHost.dispatch(requestId, hostname);
      }
    })().catch((err) => this.log.error({ err }, "the programming feed stopped following the log: a bug; agents' programming subscriptions get no new requests until a restart"));
  }
}
