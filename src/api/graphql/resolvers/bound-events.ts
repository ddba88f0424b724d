import { allows, canSeeArq } from "../../auth/policy.js";
import type { ApiContext, BindNotification } from "../context.js";
import { forbidden, unauthenticated } from "../errors.js";
import type { Doc } from "../read-side.js";

export interface BoundEventPayload {
  name: "accelerator-request-bound";
  serverUuid: string;
  tag: string;
  status: "COMPLETED" | "FAILED";
  reason: string | null;
  arq: Doc;
}

type Args = { instanceUuid?: string | null; arqUuids?: string[] | null };

/**
 * The acceleratorRequestBound stream. It listens first, then looks at the read models, so an ARQ
 * that resolved before the subscription (a late subscriber) is sent at once, and one that
 * resolves while we look is sent exactly once: each ARQ's last sent resolution is remembered by
 * log position, and anything at or before it is dropped.
 *
 * Ending it: a client's `complete` reaches us as return() while the generator waits for the next
 * notification, and an async generator takes return() only at a yield. So return() closes the
 * listener first, which ends that wait; without it every completed subscription stayed in memory.
 */
export function boundEvents(ctx: ApiContext, args: Args): AsyncIterableIterator<BoundEventPayload> {
  let listener: Listener | undefined;
  const gen = stream(ctx, args, (l) => (listener = l));
  return {
    next: () => gen.next(),
    return: (value?: unknown) => {
      listener?.close();
      return gen.return(value as never);
    },
    throw: (err?: unknown) => {
      listener?.close();
      return gen.throw(err);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

type Listener = ReturnType<ApiContext["services"]["notifications"]["listen"]>;

async function* stream(ctx: ApiContext, args: Args, opened: (l: Listener) => void): AsyncGenerator<BoundEventPayload> {
  const p = ctx.principal;
  if (!p) throw unauthenticated();
  if (!allows(p, "arq:read")) throw forbidden("subscribing to accelerator-request-bound");
  const wanted = args.arqUuids?.length ? new Set(args.arqUuids) : undefined;
  const matches = (n: BindNotification) =>
    (!wanted || wanted.has(n.arqUuid)) && (!args.instanceUuid || args.instanceUuid === n.instanceUuid);
  const visible = (arq: Doc) => canSeeArq(p, arq.projectId);
  const sent = new Map<string, bigint>();

  const listener = ctx.services.notifications.listen(args);
  opened(listener);
  try {
    await listener.ready;
    // Only a subscription that names what it waits for gets the already-resolved ARQs.
    if (wanted || args.instanceUuid) {
      for (const arq of await alreadyResolved(ctx, args)) {
        if (!visible(arq)) continue;
        sent.set(arq.uuid, BigInt(String(arq.position ?? "0")));
        const status = arq.state === "BOUND" ? "COMPLETED" : "FAILED";
        yield payload(arq, String(arq.instanceUuid ?? args.instanceUuid ?? ""), status, (arq.bindFailureReason as string | null) ?? null);
      }
    }
    for await (const n of listener.events) {
      if (!matches(n)) continue;
      const pos = BigInt(n.position);
      if ((sent.get(n.arqUuid) ?? -1n) >= pos) continue;
      const [arq] = await ctx.services.read.getArqs([n.arqUuid]);
      if (!arq || !visible(arq)) continue;
      sent.set(n.arqUuid, pos);
      yield payload(arq, n.instanceUuid, n.status, n.reason);
    }
  } finally {
    listener.close();
  }
}

async function alreadyResolved(ctx: ApiContext, args: Args): Promise<Doc[]> {
  const read = ctx.services.read;
  const arqs = args.arqUuids?.length
    ? (await read.getArqs(args.arqUuids)).filter((a): a is Doc => a !== null)
    : (await read.listArqs({ instanceUuid: args.instanceUuid! }, 1000)).items;
  return arqs.filter(
    (a) => (a.state === "BOUND" || a.state === "BIND_FAILED") && (!args.instanceUuid || a.instanceUuid === args.instanceUuid),
  );
}

function payload(arq: Doc, serverUuid: string, status: "COMPLETED" | "FAILED", reason: string | null): BoundEventPayload {
  return { name: "accelerator-request-bound", serverUuid, tag: arq.uuid, status, reason, arq };
}
