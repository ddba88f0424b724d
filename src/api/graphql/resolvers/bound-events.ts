import type { ArqBoundEvent } from "../../../../projections/arqs/bound-notifier.js";
import { getArqs, listArqs } from "../../../../projections/arqs/queries.js";
import type { ArqView } from "../../../domain/arqs/view.js";
import { distinctArqList } from "../../../app/request-limits.js";
import { boundNotification } from "../../../domain/arqs/bound-notification.js";
import { allows, canSeeArq } from "../../auth/policy.js";
import type { ApiContext } from "../context.js";
import { forbidden, unauthenticated } from "../errors.js";
import { closingIterator } from "./closing-iterator.js";

/** What acceleratorRequestBound sends (GraphQL's ArqBindEvent): Nova's event with the ARQ as the read models show it. */
export type BoundEventPayload = ArqBoundEvent & { arq: ArqView };

type Args = { instanceUuid?: string | null; arqUuids?: string[] | null };

/**
 * The acceleratorRequestBound stream. It listens first, then looks at the read models, so an ARQ
 * that resolved before the subscription (a late subscriber) is sent at once, and one that
 * resolves while we look is sent exactly once: each ARQ's last sent resolution is remembered by
 * log position, and anything at or before it is dropped.
 * Ending it closes the listener first (closing-iterator.ts).
 */
export function boundEvents(ctx: ApiContext, args: Args): AsyncIterableIterator<BoundEventPayload> {
  let listener: Listener | undefined;
  // Each ARQ once, before any work: a uuid listed N times is one wait, not N.
  const arqUuids = args.arqUuids ? distinctArqList("arqUuids", args.arqUuids) : args.arqUuids;
  const gen = stream(ctx, { ...args, arqUuids }, (l) => (listener = l));
  return closingIterator(gen, () => listener?.close());
}

type Listener = ReturnType<ApiContext["services"]["notifications"]["listen"]>;

async function* stream(ctx: ApiContext, args: Args, opened: (l: Listener) => void): AsyncGenerator<BoundEventPayload> {
  const p = ctx.principal;
  if (!p) throw unauthenticated();
  if (!allows(p, "arq:read")) throw forbidden("subscribing to accelerator-request-bound");
  const wanted = args.arqUuids?.length ? new Set(args.arqUuids) : undefined;
  const matches = (e: ArqBoundEvent) => (!wanted || wanted.has(e.tag)) && (!args.instanceUuid || args.instanceUuid === e.serverUuid);
  const visible = (arq: ArqView) => canSeeArq(p, arq.projectId);
  const sent = new Map<string, bigint>();

  const listener = ctx.services.notifications.listen(args);
  opened(listener);
  try {
    await listener.ready;
    // Only a subscription that names what it waits for gets the already-resolved ARQs.
    if (wanted || args.instanceUuid) {
      for (const arq of await alreadyResolved(ctx, args)) {
        if (!visible(arq)) continue;
        sent.set(arq.uuid, BigInt(arq.position));
        yield { ...resolvedEvent(arq, arq.instanceUuid ?? args.instanceUuid ?? ""), arq };
      }
    }
    for await (const e of listener.events) {
      if (!matches(e)) continue;
      const pos = BigInt(e.position);
      if ((sent.get(e.tag) ?? -1n) >= pos) continue;
      const [arq] = await getArqs(ctx.services.readStore, [e.tag]);
      if (!arq || !visible(arq)) continue;
      sent.set(e.tag, pos);
      yield { ...e, arq };
    }
  } finally {
    listener.close();
  }
}

async function alreadyResolved(ctx: ApiContext, args: Args): Promise<ArqView[]> {
  const store = ctx.services.readStore;
  const arqs = args.arqUuids?.length
    ? (await getArqs(store, args.arqUuids)).filter((a) => a !== null)
    : (await listArqs(store, { instanceUuid: args.instanceUuid! }, 1000)).items;
  return arqs.filter((a) => (a.state === "BOUND" || a.state === "BIND_FAILED") && (!args.instanceUuid || a.instanceUuid === args.instanceUuid));
}

/** The event of a bind that resolved before the subscriber listened, as the read model shows it. */
const resolvedEvent = (arq: ArqView, serverUuid: string): ArqBoundEvent =>
  boundNotification({ arqUuid: arq.uuid, status: arq.state === "BOUND" ? "COMPLETED" : "FAILED", reason: arq.bindFailureReason }, serverUuid, arq.position);
