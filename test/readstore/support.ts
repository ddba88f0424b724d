import type { DomainEvent } from "../../src/domain/events.js";
import { ARQ_BOUND_TOPIC, type ArqBoundEvent } from "../../projections/arqs/bound-notifier.js";
import { getArqs } from "../../projections/arqs/queries.js";
import type { PubSub } from "../../src/infra/pubsub/port.js";
import type { Origin, ReadStore, Write } from "../../src/infra/readstore/port.js";
import {
  allocated,
  arqCreated,
  arqDeleted,
  bindFailed,
  bindStarted,
  bound,
  gpuHost,
  profileCreated,
  profileDeleted,
  released,
  unbound,
} from "../projections/support.js";

/** A log that touches every projection: hosts, profiles, ARQs through their whole life. */
export function mixedLog(hosts = 3, arqsPerHost = 4): DomainEvent[] {
  const out: DomainEvent[] = [profileCreated("gpu", "dp-1"), profileCreated("old", "dp-0"), profileDeleted("old", "dp-0")];
  for (let h = 0; h < hosts; h++) out.push(...gpuHost(`host${h}`, `${h}`));
  for (let h = 0; h < hosts; h++) {
    for (let i = 0; i < arqsPerHost; i++) {
      const a = `arq-${h}-${i}`;
      const host = `host${h}`;
      out.push(arqCreated(a), bindStarted(a, host, `inst-${h}-${i}`, `rp-p${h}`));
      if (i % 4 === 3) {
        out.push(bindFailed(a, "no free attach handle", `inst-${h}-${i}`));
        continue;
      }
      out.push(bound(a, { host, instance: `inst-${h}-${i}`, dep: `p${h}`, handle: `h${h}` }), allocated(host, `d${h}`, `p${h}`, `h${h}`, a, `inst-${h}-${i}`));
      if (i % 4 === 2) continue; // stays bound
      out.push(unbound(a, { host, instance: `inst-${h}-${i}`, handle: `h${h}` }), released(host, `p${h}`, `h${h}`, a));
      if (i % 4 === 1) out.push(arqDeleted(a));
    }
  }
  return out;
}

/**
 * Everything every projection holds, without checkpoints: a projection whose last events had no
 * writes for it may save its checkpoint a moment later (see the runner), the models are the same.
 */
export async function dumpAll(store: ReadStore, names: readonly string[]) {
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await store.dump(n)).keys] as const)));
}

/** Waits until `check` passes (or throws its last failure). */
export async function eventually(check: () => void | Promise<void>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** A ReadStore that fails every write after `okBatches` of them: a projector that crashed. */
export class CrashingStore implements ReadStore {
  readonly kind;
  applied = 0;
  crashed = false;
  constructor(
    private readonly inner: ReadStore,
    private readonly okBatches: number,
  ) {
    this.kind = inner.kind;
  }
  async applyBatch(p: string, w: readonly Write[], cp: bigint, expected?: bigint | null, origin?: Origin) {
    if (this.applied >= this.okBatches) {
      this.crashed = true;
      throw new Error("crashed");
    }
    this.applied++;
    return this.inner.applyBatch(p, w, cp, expected, origin);
  }
  getCheckpoint(p: string) {
    return this.inner.getCheckpoint(p);
  }
  getCheckpoints(p: readonly string[]) {
    return this.inner.getCheckpoints(p);
  }
  getStamps(p: readonly string[]) {
    return this.inner.getStamps(p);
  }
  watchReconnects(listener: () => void) {
    return this.inner.watchReconnects(listener);
  }
  drop(p: string) {
    return this.inner.drop(p);
  }
  markServing(p: string, cp: bigint | null) {
    return this.inner.markServing(p, cp);
  }
  unmarkServing(p: string) {
    return this.inner.unmarkServing(p);
  }
  serving(p: readonly string[]) {
    return this.inner.serving(p);
  }
  guarded() {
    return this.inner.guarded();
  }
  getDocs(k: readonly string[]) {
    return this.inner.getDocs(k);
  }
  getMembers(k: readonly string[]) {
    return this.inner.getMembers(k);
  }
  count(k: readonly string[]) {
    return this.inner.count(k);
  }
  range(k: readonly string[], o: { after?: string; limit: number }) {
    return this.inner.range(k, o);
  }
  dump(p: string) {
    return this.inner.dump(p);
  }
  close() {
    return this.inner.close();
  }
}

export interface Received {
  notification: ArqBoundEvent;
  /** The ARQ's state in the read model when the subscriber got the notification. */
  stateOnReceipt: string | null;
}

/** Subscribes to accelerator-request-bound and, on each message, reads the ARQ from the read model. */
export async function listen(pubsub: PubSub, store: ReadStore) {
  const received: Received[] = [];
  const sub = pubsub.subscribe<ArqBoundEvent>(ARQ_BOUND_TOPIC);
  await sub.ready;
  const done = (async () => {
    for await (const n of sub) {
      const [arq] = await getArqs(store, [n.tag]);
      received.push({ notification: n, stateOnReceipt: arq?.state ?? null });
    }
  })();
  return {
    received,
    async close() {
      await sub.close();
      await done;
    },
  };
}
