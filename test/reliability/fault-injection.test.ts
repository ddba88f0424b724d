/**
 * Every step of every decision that spans streams, on a store that appends a sequence step by step
 * (the memory store so, and the EventStoreDB adapter on the stand-in server): the Nth append fails with a transport error (written or not), or the
 * process stops after it. Then the service resumes on the same log (a fresh Application, the binder
 * and the invariant checker): the invariants hold (every allocated handle belongs to a binding or
 * BOUND ARQ of that handle, every BOUND ARQ's handle is allocated to it, the profile counts exactly
 * the live ARQs) and an ARQ can be bound again on the host's one handle (none leaked).
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { loadAggregate } from "../../src/app/handle.js";
import { arqDecider, liveArq } from "../../src/domain/arqs/decider.js";
import { deviceProfileDecider } from "../../src/domain/device-profiles/decider.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { hostDecider } from "../../src/domain/inventory/decider.js";
import { stream } from "../../src/domain/shared/types.js";
import { EsdbEventStore } from "../../src/infra/eventstore/esdb.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import type { EventStore } from "../../src/infra/eventstore/port.js";
import { createLogger } from "../../src/infra/logger.js";
import { Binder } from "../../src/reactors/binder/binder.js";
import { InvariantChecker } from "../../src/reactors/invariants/checker.js";
import { ADMIN, ctx, fpga } from "../app/support.js";
import { EsdbStandIn } from "../support/esdb-standin/index.js";
import { StepByStepStore, type Fault } from "./step-store.js";

const HOST = "compute1";
const RP = rpUuidFor(`${HOST}_0000:af:00.0`);
const nova = ctx({ isAdmin: true, principal: "nova" });
const binderCtx = { principal: "system:binder", correlationId: "b", causationId: "b", at: "2026-03-01T10:02:00.000Z" };
const silent = createLogger("silent");
const bindingFor = (arqUuid: string, instanceUuid = "vm-1") => ({ arqUuid, hostname: HOST, deviceRpUuid: RP, instanceUuid });

/** The logs the decisions run on. */
const LOGS: Record<string, () => EventStore> = {
  "memory, step by step": () => new MemoryEventStore(),
  "EventStoreDB stand-in": () => new EsdbEventStore(new EsdbStandIn().connect()),
};

interface World {
  log: EventStore;
  store: StepByStepStore;
  app: Application;
  newId: () => string;
  arqUuid?: string;
}

/** A host with one handle and a profile asking for one FPGA. */
async function world(makeLog: () => EventStore): Promise<World> {
  const log = makeLog();
  const store = new StepByStepStore(log);
  let n = 0;
  const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
  const app = new Application({ store, newId });
  await app.reportHostInventory({ ...ADMIN, principal: "agent:compute1" }, HOST, [fpga(HOST, "af", 1)]);
  await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
  return { log, store, app, newId };
}

const created = async (w: World) => (w.arqUuid = (await w.app.createArqs(nova, { deviceProfileName: "dp1" }))[0]!.uuid);
const bound = async (w: World) => {
  await created(w);
  const [a] = await w.app.startBinds(nova, [bindingFor(w.arqUuid!)], { allocate: true });
  expect(a!.state).toBe("BOUND");
};

/** Each decision: what is set up before the faults are armed, and the decision itself. */
const DECISIONS: Record<string, { before: (w: World) => Promise<unknown>; run: (w: World) => Promise<unknown> }> = {
  create: { before: async () => undefined, run: (w) => w.app.createArqs(nova, { deviceProfileName: "dp1" }) },
  "bind (mutation)": { before: created, run: (w) => w.app.startBinds(nova, [bindingFor(w.arqUuid!)], { allocate: true }) },
  "bind (binder)": {
    before: async (w) => (await created(w), w.app.startBinds(nova, [bindingFor(w.arqUuid!)])),
    run: (w) => w.app.allocateForArq(binderCtx, w.arqUuid!),
  },
  "create and bind": {
    before: async () => undefined,
    run: (w) => w.app.createAndBindArqs(nova, { deviceProfileName: "dp1" }, { instanceUuid: "vm-1", providers: [{ hostname: HOST, deviceRpUuid: RP }] }, { allocate: true }),
  },
  unbind: { before: bound, run: (w) => w.app.unbindArqs(nova, [w.arqUuid!]) },
  "delete by uuid": { before: bound, run: (w) => w.app.deleteArqs(nova, { arqUuids: [w.arqUuid!] }) },
  "delete by instance": { before: bound, run: (w) => w.app.deleteArqs(nova, { instanceUuid: "vm-1" }) },
};

const FAULTS: Fault[] = ["error-before", "error-after", "crash-after"];

/** What must hold across the ARQs, the host and the profile, read straight from the log. */
async function violations(log: EventStore): Promise<string[]> {
  const arqStreams = [...new Set((await log.readAll()).map((e) => e.stream).filter((s) => s.startsWith("arq-")))];
  const arqs = new Map(await Promise.all(arqStreams.map(async (s) => [s.slice(4), (await loadAggregate(log, s, arqDecider)).state] as const)));
  const host = (await loadAggregate(log, stream.host(HOST), hostDecider)).state;
  const profile = (await loadAggregate(log, stream.deviceProfile("dp1"), deviceProfileDecider)).state;
  const out: string[] = [];
  for (const [arqUuid, a] of host.allocations) {
    const arq = liveArq(arqs.get(arqUuid) ?? { status: "absent" });
    const holds = arq && (arq.state === "BIND_STARTED" || arq.state === "BOUND") && arq.deviceRpUuid === a.rpUuid && arq.instanceUuid === a.instanceUuid;
    if (!holds || (arq.state === "BOUND" && arq.attachment?.handleUuid !== a.handleUuid)) out.push(`handle ${a.handleUuid} allocated to ARQ ${arqUuid} (${arq?.state ?? "gone"})`);
  }
  for (const [arqUuid, st] of arqs) {
    const arq = liveArq(st);
    if (arq?.state === "BOUND" && host.allocations.get(arqUuid)?.handleUuid !== arq.attachment?.handleUuid) out.push(`ARQ ${arqUuid} BOUND without its handle`);
    const counted = profile.status === "active" && profile.liveArqs.has(arqUuid);
    if (counted !== (arq !== null)) out.push(`ARQ ${arqUuid} (${arq?.state ?? "deleted"}) ${counted ? "counted" : "not counted"} by its profile`);
  }
  return out;
}

/** A fresh process on the same log: its binder finishes what is binding, its checker repairs, until nothing is left to repair. */
async function resume(w: World): Promise<Application> {
  const app = new Application({ store: new StepByStepStore(w.log), newId: w.newId });
  const binder = new Binder({ store: w.log, app, log: silent, bindTimeoutMs: 60_000 });
  const checker = new InvariantChecker({ store: w.log, app, log: silent, graceMs: 60_000 });
  await binder.start();
  await checker.start();
  try {
    for (let round = 0; round < 5; round++) {
      await binder.idle();
      await checker.caughtUp((await w.log.headPosition())!);
      if ((await checker.checkDue(true)).length === 0) break;
    }
    await binder.idle();
  } finally {
    await checker.stop();
    await binder.stop();
  }
  return app;
}

/** An ARQ of the profile can be bound on the host's only handle: none leaked. */
async function bindsAgain(w: World, app: Application): Promise<void> {
  const live = [...new Set((await w.log.readAll()).filter((e) => e.stream.startsWith("arq-")).map((e) => e.stream.slice(4)))];
  const views = (await Promise.all(live.map((id) => app.getArq(id)))).filter((v) => v !== null);
  if (views.some((v) => v.state === "BOUND")) return;
  for (const v of views) if (v.state !== "INITIAL" && v.state !== "UNBOUND") await app.unbindArqs(nova, [v.uuid]);
  const arqUuid = views[0]?.uuid ?? (await app.createArqs(nova, { deviceProfileName: "dp1" }))[0]!.uuid;
  const [again] = await app.startBinds(nova, [bindingFor(arqUuid, "vm-again")], { allocate: true });
  expect(again!.state).toBe("BOUND");
}

for (const [logName, makeLog] of Object.entries(LOGS)) {
  describe(`a decision spanning streams, stopped at any step, is made whole on resume (${logName})`, () => {
    for (const [name, decision] of Object.entries(DECISIONS)) {
      for (const fault of FAULTS) {
        it(`${name}: ${fault} at every append`, async () => {
          for (let n = 1; ; n++) {
            const w = await world(makeLog);
            await decision.before(w);
            w.store.arm(n, fault);
            await decision.run(w).catch(() => undefined);
            if (!w.store.fired) {
              expect(n, "the decision appended at least once").toBeGreaterThan(1);
              break;
            }
            const app = await resume(w);
            expect(await violations(w.log), `${name}, ${fault} at append ${n}`).toEqual([]);
            await bindsAgain(w, app);
            expect(await violations(w.log), `${name}, ${fault} at append ${n}, bound again`).toEqual([]);
            await w.log.close();
          }
        });
      }
    }
  });
}
