/**
 * The projector while its subscription to the log is lost: its status shows the outage on every
 * projection; once the log answers again it applies what was appended meanwhile, once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { getArqs } from "../../projections/arqs/queries.js";
import { projections } from "../../projections/index.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { append, arqCreated } from "../projections/support.js";
import { dumpAll } from "../readstore/support.js";
import { mixedLog } from "../readstore/support.js";
import { DroppingStore } from "../support/dropping-store.js";
import { capturingLogger } from "../support/log-lines.js";

const names = projections.map((p) => p.name);
const running: Projector[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) await p.stop();
});

describe("the projector, when its subscription to the log is lost", () => {
  it("shows the outage on every projection, then applies what was appended meanwhile, once", async () => {
    const inner = new MemoryEventStore();
    await append(inner, mixedLog(1, 2));
    const store = new DroppingStore(inner);
    const readStore = new MemoryReadStore();
    const { log, said } = capturingLogger();
    const projector = new Projector({ events: store, store: readStore, projections, log, healthCheckMs: 20 });
    running.push(projector);
    await projector.start();

    store.down();
    await append(inner, [arqCreated("during")]);
    await expect.poll(() => projector.status().every((s) => (s.outage?.attempts ?? 0) >= 1)).toBe(true);
    expect(projector.status()[0]!.outage).toMatchObject({ lastError: "event store unreachable" });

    store.up();
    await projector.caughtUp({ timeoutMs: 5_000 });
    expect((await getArqs(readStore, ["during"]))[0]?.state).toBe("INITIAL");
    for (const s of projector.status()) expect(s.outage).toBeUndefined();
    // The models are what a replay of the log gives: nothing applied twice, nothing missed.
    const replayed = new MemoryReadStore();
    await new Projector({ events: inner, store: replayed, projections }).rebuild();
    expect(await dumpAll(readStore, names)).toEqual(await dumpAll(replayed, names));
    expect(said("lost the event log subscription; subscribing again from the last event handled, with backoff", { follower: "projector" })).toHaveLength(1);
    expect(said("event log subscription restored", { follower: "projector" })).toHaveLength(1);
  });
});
