/**
 * Sending accelerator-request-bound events to Nova: the events of one instance in one request,
 * a few requests at once, and what Nova said of each event.
 */
import type { NovaClient, NovaEvent } from "./client.js";
import { NovaError, NovaRefusedError } from "./errors.js";

/** One bind resolution to tell Nova about. */
export interface Delivery {
  /** `<log position>/<arq uuid>`: one per resolution (a retried batch finds it again). */
  key: string;
  event: NovaEvent;
}

export type Outcome =
  /** 200: Nova has it. 404: the instance does not exist. 422: the instance is not on a host yet. */
  | { delivery: Delivery; result: "delivered" | "gone" | "no-host" }
  | { delivery: Delivery; result: "failed"; error: NovaError };

/** Sends the deliveries grouped by instance, up to `concurrency` requests at once. Never throws (but for an abort). */
export async function send(client: NovaClient, deliveries: readonly Delivery[], o: { concurrency: number; signal: AbortSignal }): Promise<Outcome[]> {
  const byInstance = new Map<string, Delivery[]>();
  for (const d of deliveries) byInstance.set(d.event.server_uuid, [...(byInstance.get(d.event.server_uuid) ?? []), d]);
  const queue = [...byInstance];
  const outcomes: Outcome[] = [];
  const worker = async () => {
    for (let next = queue.shift(); next && !o.signal.aborted; next = queue.shift()) {
      const [instance, group] = next;
      try {
        const codes = await client.sendEvents(instance, group.map((d) => d.event), o.signal);
        group.forEach((delivery, i) => outcomes.push(outcomeOf(client, delivery, codes[i]!)));
      } catch (err) {
        if (!(err instanceof NovaError)) throw err;
        for (const delivery of group) outcomes.push({ delivery, result: "failed", error: err });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency, queue.length) }, worker));
  if (o.signal.aborted) throw o.signal.reason;
  return outcomes;
}

function outcomeOf(client: NovaClient, delivery: Delivery, code: number): Outcome {
  if (code === 200) return { delivery, result: "delivered" };
  if (code === 404) return { delivery, result: "gone" };
  if (code === 422) return { delivery, result: "no-host" };
  const instance = delivery.event.server_uuid;
  return { delivery, result: "failed", error: new NovaRefusedError(client.url, instance, { status: code, detail: `(per-event code for ARQ ${delivery.event.tag})` }) };
}
