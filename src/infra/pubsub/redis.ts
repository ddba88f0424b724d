import { Command } from "ioredis";
import { connectRedis, type RedisClient, type RedisTarget } from "../redis-client.js";
import type { PubSub, PubSubSubscription } from "./port.js";
import { SubscriptionQueue } from "./subscription-queue.js";

interface Topic {
  subs: Set<SubscriptionQueue<unknown>>;
  /** The SUBSCRIBE acknowledgement: `ready` waits for it. */
  subscribed: Promise<void>;
}

/**
 * Pub/sub across API replicas over Redis PUBLISH/SUBSCRIBE: one connection publishes, one
 * subscribes (a subscribed connection cannot publish), one SUBSCRIBE per topic shared by every
 * local subscriber. ioredis re-subscribes after a reconnect; messages sent meanwhile are lost
 * (at most once, as Redis pub/sub).
 */
export class RedisPubSub implements PubSub {
  readonly kind = "redis" as const;
  private readonly pub: RedisClient;
  private readonly sub: RedisClient;
  private readonly topics = new Map<string, Topic>();
  private readonly ownsClients: boolean;

  /** Put before every channel (REDIS_KEY_PREFIX): deployments sharing one Redis hear only their own. */
  private readonly prefix: string;

  /** A URL (one server), or a target (one server or a cluster, redis-client.ts). */
  constructor(target: string | RedisTarget, options?: { channelPrefix?: string });
  /** Clients given are not closed by close(); the subscriber must be dedicated to this pub/sub. */
  constructor(clients: { publisher: RedisClient; subscriber: RedisClient }, options?: { channelPrefix?: string });
  constructor(arg: string | RedisTarget | { publisher: RedisClient; subscriber: RedisClient }, options: { channelPrefix?: string } = {}) {
    this.prefix = options.channelPrefix ?? "";
    this.ownsClients = typeof arg === "string" || "url" in arg;
    if (typeof arg === "string" || "url" in arg) {
      // On a cluster, classic PUBLISH reaches the subscribers on every node; ioredis keeps the
      // subscriptions on one node and moves them to another if that one fails.
      const target = typeof arg === "string" ? { url: arg, cluster: false } : arg;
      this.pub = connectRedis(target);
      this.sub = connectRedis(target);
    } else {
      this.pub = arg.publisher;
      this.sub = arg.subscriber;
    }
    this.sub.on("message", (channel: string, message: string) => this.dispatch(channel, message));
  }

  async publish(topic: string, payload: unknown): Promise<void> {
    await this.pub.sendCommand(new ChannelPublish(this.prefix + topic, JSON.stringify(payload)));
  }

  subscribe<T = unknown>(name: string): PubSubSubscription<T> {
    let topic = this.topics.get(name);
    if (!topic) {
      const subscribed = this.sub.subscribe(this.prefix + name).then(() => undefined);
      topic = { subs: new Set(), subscribed };
      this.topics.set(name, topic);
    }
    const t = topic;
    const queue: SubscriptionQueue<unknown> = new SubscriptionQueue(t.subscribed, async () => {
      t.subs.delete(queue);
      if (t.subs.size === 0 && this.topics.get(name) === t) {
        this.topics.delete(name);
        await this.sub.unsubscribe(this.prefix + name).catch(() => undefined);
      }
    });
    t.subs.add(queue);
    return queue as SubscriptionQueue<T>;
  }

  async close(): Promise<void> {
    for (const t of [...this.topics.values()]) for (const s of [...t.subs]) await s.close();
    if (this.ownsClients) {
      this.pub.disconnect();
      this.sub.disconnect();
    }
  }

  private dispatch(channel: string, message: string): void {
    if (!channel.startsWith(this.prefix)) return;
    const topic = this.topics.get(channel.slice(this.prefix.length));
    if (!topic) return;
    for (const s of topic.subs) s.push(JSON.parse(message));
  }
}

/**
 * PUBLISH, sent on a cluster to the master of the channel's slot (ioredis would pick any node for
 * a command without keys): one node carries each channel's messages, so they arrive in order.
 */
class ChannelPublish extends Command {
  constructor(
    private readonly channel: string,
    message: string,
  ) {
    super("publish", [channel, message]);
  }

  override getKeys(): string[] {
    return [this.channel];
  }
}
