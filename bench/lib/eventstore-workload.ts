import { randomUUID } from "node:crypto";
import { newEventId } from "../../src/app/event-ids.js";
import type { EventStore, NewEvent, Subscription } from "../../src/infra/eventstore/port.js";

/** Progress goes to stderr so stdout stays the results. */
export const progress = (msg: string): void => void process.stderr.write(`[bench:eventstore] ${msg}\n`);

const metadata = {
  principal: "agent:compute-017",
  correlationId: randomUUID(),
  causationId: randomUUID(),
  at: "2026-11-22T10:00:00.000Z",
};

/** Event ids: time-ordered (v7, what the application writes) or random (v4). */
export type IdKind = "v4" | "v7";
const newId = (kind: IdKind): string => (kind === "v7" ? newEventId() : randomUUID());

/** An event shaped like an inventory report's device (about 400 bytes stored). */
export function sampleEvent(i: number, ids: IdKind = "v7"): NewEvent {
  return {
    id: newId(ids),
    type: "DeviceAdded",
    data: {
      hostname: "compute-017",
      deviceUuid: randomUUID(),
      type: "GPU",
      vendor: "10de",
      model: "A100-SXM4-40GB",
      stdBoardInfo: { product_id: "20b0", controller: "3D controller" },
      controlPath: { domain: "0000", bus: "3b", device: "00", function: String(i % 8) },
      driverName: "nvidia-gpu",
    },
    metadata,
  };
}

/**
 * `writers` concurrent writers, each appending single events to its own stream with the exact
 * expected revision (what a command handler does), until `total` appends are done.
 * Returns appends per second.
 */
export async function appendRate(
  store: EventStore,
  writers: number,
  total: number,
  tag: string,
  ids: IdKind = "v7",
): Promise<number> {
  let issued = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      let revision: number | "no_stream" = "no_stream";
      while (issued < total) {
        issued++;
        revision = (await store.append(`bench-${tag}-${w}`, [sampleEvent(issued, ids)], revision)).revision;
      }
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

/**
 * Writes `total` events fast (100-event appends from 20 writers), reporting progress. Time-ordered
 * ids keep the setup short; what is measured afterwards (reading) does not depend on them.
 */
export async function fill(store: EventStore, total: number, perAppend = 100): Promise<void> {
  let written = 0;
  let nextReport = 100_000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 20 }, async (_, w) => {
      while (written < total) {
        const n = Math.min(perAppend, total - written);
        written += n;
        const events = Array.from({ length: n }, (_, k) => sampleEvent(k, "v7"));
        await store.append(`fill-${w}-${Math.floor(written / 10_000)}`, events, "any");
        if (written >= nextReport) {
          nextReport += 100_000;
          const rate = Math.round(written / ((performance.now() - t0) / 1000));
          progress(`  filled ${written.toLocaleString("en")} events (${rate.toLocaleString("en")} events/s)`);
        }
      }
    }),
  );
}

/** Reads the whole log through a catch-up subscription; returns events per second. */
export async function catchUpRate(store: EventStore, expected: number): Promise<number> {
  const sub: Subscription = store.subscribeToAll();
  let n = 0;
  let last = 0n;
  const t0 = performance.now();
  for await (const e of sub) {
    if (e.position <= last) throw new Error(`catch-up out of order at ${e.position}`);
    last = e.position;
    if (++n >= expected) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  await sub.close();
  return n / seconds;
}

/** Pages through readAll directly (no subscription machinery); returns events per second. */
export async function readAllRate(store: EventStore, pageSize: number): Promise<number> {
  let after: bigint | undefined;
  let n = 0;
  const t0 = performance.now();
  for (;;) {
    const page = await store.readAll({ after, maxCount: pageSize });
    if (page.length === 0) break;
    n += page.length;
    after = page[page.length - 1]!.position;
  }
  return n / ((performance.now() - t0) / 1000);
}
