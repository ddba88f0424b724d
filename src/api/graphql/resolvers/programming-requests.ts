import type { ProgrammingRequestView } from "../../../app/programming.js";
import { allows } from "../../auth/policy.js";
import type { ApiContext } from "../context.js";
import { forbidden, unauthenticated } from "../errors.js";
import { closingIterator } from "./closing-iterator.js";

/** What the agent receives: the request, flattened, with where to download the bitstream. */
export function requestPayload(r: ProgrammingRequestView) {
  const { bitstream, ...rest } = r;
  return {
    ...rest,
    bitstreamId: bitstream.id,
    bitstreamName: bitstream.name,
    checksum: bitstream.checksum,
    size: bitstream.size,
    functionId: bitstream.functionId,
    downloadPath: `/bitstreams/${bitstream.id}/content`,
  };
}

/** An agent token acts for its own host only; admins for any. */
export function checkHostAgent(ctx: ApiContext, hostname: string): void {
  const p = ctx.principal;
  if (!p) throw unauthenticated();
  if (!allows(p, "programming:agent")) throw forbidden("taking or reporting programming requests (admin, or the host's agent)");
  if (!p.roles.has("admin") && p.hostname !== hostname) throw forbidden(`programming requests of host ${hostname}: this agent token is for ${p.hostname}`);
}

/** The programmingRequests stream of one host (the agents that take only programming requests). */
export function programmingRequests(ctx: ApiContext, hostname: string): AsyncIterableIterator<ReturnType<typeof requestPayload>> {
  return requestStream(ctx, hostname, async () => (await ctx.services.app.programmingInFlight(hostname)).map(requestPayload));
}

/**
 * A host's requests to its agent: it listens first, then sends the requests in flight (so a
 * reconnecting agent gets what it missed), then each new one; each request once per subscription.
 * Ending it closes the listener first (closing-iterator.ts).
 */
export function requestStream<T extends { requestId: string }>(ctx: ApiContext, hostname: string, inFlight: () => Promise<T[]>): AsyncIterableIterator<T> {
  let close: (() => void) | undefined;
  const gen = stream(ctx, hostname, inFlight, (c) => (close = c));
  return closingIterator(gen, () => close?.());
}

async function* stream<T extends { requestId: string }>(ctx: ApiContext, hostname: string, current: () => Promise<T[]>, opened: (close: () => void) => void) {
  checkHostAgent(ctx, hostname);
  const listener = ctx.services.programming.listen(hostname);
  opened(listener.close);
  let sent = new Set<string>();
  async function* inFlight() {
    const requests = await current();
    const fresh = requests.filter((r) => !sent.has(r.requestId));
    // Only ids still in flight need remembering: a closed request never comes back.
    sent = new Set(requests.map((r) => r.requestId));
    for (const r of fresh) yield r;
  }
  try {
    await listener.ready;
    yield* inFlight();
    for await (const _ of listener.events) yield* inFlight();
  } finally {
    listener.close();
  }
}
