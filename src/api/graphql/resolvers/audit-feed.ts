import { positionFromString, type RecordedEvent } from "../../../infra/eventstore/port.js";
import { allows } from "../../auth/policy.js";
import type { ApiContext } from "../context.js";
import { badInput, forbidden, unauthenticated } from "../errors.js";
import { toGraphQL } from "./events.resolver.js";

export interface FeedArgs {
  types?: string[] | null;
  streamPrefix?: string | null;
  after?: string | null;
}

/**
 * The live audit feed: the event store's catch-up subscription (from `after`, exclusive, then
 * live, no gap and no duplicate), filtered. A client that reconnects passes the last position it
 * saw as `after` and misses nothing. Without `after` it starts at the log's head.
 * return() closes the store subscription at once (a client's `complete`, a dropped socket).
 */
export async function auditFeed(ctx: ApiContext, args: FeedArgs): Promise<AsyncIterableIterator<ReturnType<typeof toGraphQL>>> {
  const p = ctx.principal;
  if (!p) throw unauthenticated();
  if (!allows(p, "audit:read")) throw forbidden("subscribing to events (needs audit:read)");
  let after: bigint | undefined;
  try {
    after = args.after ? positionFromString(args.after) : await ctx.services.store.headPosition();
  } catch {
    throw badInput("after", `after must be a log position (a decimal string), got ${JSON.stringify(args.after)}`);
  }
  const filter = {
    ...(args.types?.length ? { eventTypes: args.types } : {}),
    ...(args.streamPrefix ? { streamPrefixes: [args.streamPrefix] } : {}),
  };
  const sub = ctx.services.store.subscribeToAll({ after, filter });
  const it = sub[Symbol.asyncIterator]() as AsyncIterator<RecordedEvent>;
  const done = { value: undefined, done: true } as const;
  const feed: AsyncIterableIterator<ReturnType<typeof toGraphQL>> = {
    async next() {
      const r = await it.next();
      return r.done ? done : { value: toGraphQL(r.value), done: false };
    },
    async return() {
      await sub.close();
      return done;
    },
    async throw(err?: unknown) {
      await sub.close();
      throw err;
    },
    [Symbol.asyncIterator]: () => feed,
  };
  return feed;
}
