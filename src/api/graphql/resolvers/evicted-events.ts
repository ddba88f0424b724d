import type { ArqEvictedEvent } from "../../../../projections/arqs/eviction-notifier.js";
import { getArqs, listArqs } from "../../../../projections/arqs/queries.js";
import type { ArqEviction } from "../../../domain/arqs/arq.js";
import type { ArqView } from "../../../domain/arqs/view.js";
import { allows, canSeeArq } from "../../auth/policy.js";
import type { EvictionFilter } from "../../eviction-router.js";
import type { ApiContext } from "../context.js";
import { forbidden, unauthenticated } from "../errors.js";
import { closingIterator } from "./closing-iterator.js";

/** What acceleratorRequestEvicted sends (GraphQL's ArqEvictionEvent): the notice, and the ARQ as the read models show it. */
export interface EvictedEventPayload {
  arqUuid: string;
  instanceUuid: string | null;
  notice: ArqEviction;
  arq: ArqView;
}

/** At most this many of an instance's ARQs are looked at for outstanding notices (an instance holds a few). */
const INSTANCE_ARQS = 1000;

/**
 * The acceleratorRequestEvicted stream. It listens first, then reads the notices still outstanding
 * (those on ARQs of the arqUuid or instanceUuid named), so a holder that subscribes late still
 * hears of its notice, and one given while it looks is sent once: a notice is known by its ARQ,
 * device, taint and time. A subscription that names nothing gets only the notices given after it.
 * Ending it closes the listener first (closing-iterator.ts).
 */
export function evictedEvents(ctx: ApiContext, args: EvictionFilter): AsyncIterableIterator<EvictedEventPayload> {
  let listener: ReturnType<ApiContext["services"]["evictions"]["listen"]> | undefined;
  const gen = stream(ctx, args, (l) => (listener = l));
  return closingIterator(gen, () => listener?.close());
}

const noticeKey = (arqUuid: string, n: Pick<ArqEviction, "deviceUuid" | "taintKey" | "requestedAt">) => `${arqUuid}|${n.deviceUuid}|${n.taintKey}|${n.requestedAt}`;

async function* stream(ctx: ApiContext, args: EvictionFilter, opened: (l: ReturnType<ApiContext["services"]["evictions"]["listen"]>) => void): AsyncGenerator<EvictedEventPayload> {
  const p = ctx.principal;
  if (!p) throw unauthenticated();
  if (!allows(p, "arq:read")) throw forbidden("subscribing to accelerator-request-evicted");
  const matches = (e: ArqEvictedEvent) => (!args.arqUuid || args.arqUuid === e.arqUuid) && (!args.instanceUuid || args.instanceUuid === e.instanceUuid);
  const visible = (arq: ArqView | null | undefined): arq is ArqView => !!arq && canSeeArq(p, arq.projectId);
  const sent = new Set<string>();

  const listener = ctx.services.evictions.listen(args);
  opened(listener);
  try {
    await listener.ready;
    for (const arq of await outstanding(ctx, args)) {
      if (!visible(arq) || !arq.eviction) continue;
      sent.add(noticeKey(arq.uuid, arq.eviction));
      yield { arqUuid: arq.uuid, instanceUuid: arq.instanceUuid, notice: { ...arq.eviction }, arq };
    }
    for await (const e of listener.events) {
      if (!matches(e)) continue;
      const notice: ArqEviction = { deviceUuid: e.deviceUuid, taintKey: e.taintKey, reason: e.reason, deadline: e.deadline, requestedAt: e.at };
      const key = noticeKey(e.arqUuid, notice);
      if (sent.has(key)) continue;
      const [arq] = await getArqs(ctx.services.readStore, [e.arqUuid]);
      if (!visible(arq)) continue;
      sent.add(key);
      yield { arqUuid: e.arqUuid, instanceUuid: e.instanceUuid, notice, arq };
    }
  } finally {
    listener.close();
  }
}

/** The ARQs named by the subscription that carry a notice now. */
async function outstanding(ctx: ApiContext, args: EvictionFilter): Promise<ArqView[]> {
  const store = ctx.services.readStore;
  if (args.arqUuid) return (await getArqs(store, [args.arqUuid])).filter((a): a is ArqView => !!a?.eviction && (!args.instanceUuid || a.instanceUuid === args.instanceUuid));
  if (args.instanceUuid) return (await listArqs(store, { instanceUuid: args.instanceUuid }, INSTANCE_ARQS)).items.filter((a) => a.eviction);
  return [];
}
