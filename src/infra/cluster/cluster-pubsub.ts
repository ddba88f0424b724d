/**
 * Pub/sub across the API workers and the primary, over their IPC channels: what one process
 * publishes reaches every process's subscribers, as Redis pub/sub does across replicas. The
 * primary relays a worker's message to the others. At most once, as the port says.
 */
import { InProcessPubSub } from "../pubsub/in-process.js";
import type { PubSub, PubSubSubscription } from "../pubsub/port.js";
import type { Published } from "./messages.js";

export class ClusterPubSub implements PubSub {
  readonly kind = "in-process" as const;
  private readonly local = new InProcessPubSub();

  /** `forward`: sends this process's messages to the others. */
  constructor(private readonly forward: (msg: Published) => void) {}

  async publish(topic: string, payload: unknown): Promise<void> {
    // Through JSON first, as the port promises: what cannot travel fails here, in every process alike.
    const copy = JSON.parse(JSON.stringify(payload)) as unknown;
    await this.local.publish(topic, copy);
    this.forward({ cyborg: "publish", topic, payload: copy });
  }

  /** A message another process published. */
  deliver(msg: Published): void {
    void this.local.publish(msg.topic, msg.payload);
  }

  subscribe<T = unknown>(topic: string): PubSubSubscription<T> {
    return this.local.subscribe<T>(topic);
  }

  async close(): Promise<void> {
    await this.local.close();
  }
}
