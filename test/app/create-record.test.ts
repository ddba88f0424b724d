/**
 * A creation's profile step refused by a concurrent change (as EventStoreDB refuses an expected
 * revision that moved) is tried again on the profile as it is now: the caller's new ARQs stay.
 * Only a profile that is really gone undoes them.
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { WrongExpectedRevisionError, type ExpectedRevision, type NewEvent } from "../../src/infra/eventstore/port.js";
import { StepByStepStore } from "../reliability/step-store.js";
import { ADMIN, ctx, types } from "./support.js";

/** Refuses the first `times` appends to the profile's stream, as if another writer had just appended to it. */
class RefusesProfileStep extends StepByStepStore {
  constructor(
    log: MemoryEventStore,
    private times: number,
    /** Runs when the step is refused: the concurrent change. */
    private readonly meanwhile: () => Promise<unknown> = async () => undefined,
  ) {
    super(log);
  }

  override async append(s: string, events: readonly NewEvent[], expected: ExpectedRevision) {
    if (s === stream.deviceProfile("dp1") && events.some((e) => e.type === "DeviceProfileArqsCreated") && this.times-- > 0) {
      await this.meanwhile();
      throw new WrongExpectedRevisionError(s, expected, 99);
    }
    return super.append(s, events, expected);
  }
}

async function world(refusals: number, meanwhile?: (log: MemoryEventStore) => Promise<unknown>) {
  const log = new MemoryEventStore();
  const app = new Application({ store: new RefusesProfileStep(log, refusals, () => meanwhile?.(log) ?? Promise.resolve()) });
  const profile = await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "2" }] });
  return { log, app, profile };
}

describe("a creation whose profile step is refused", () => {
  it("records the ARQs on the profile as it is now, and keeps them", async () => {
    const { log, app } = await world(1);
    const arqs = await app.createArqs(ctx(), { deviceProfileName: "dp1" });
    expect(arqs).toHaveLength(2);
    for (const a of arqs) expect(await types(log, stream.arq(a.uuid))).toEqual(["ArqCreated"]);
    expect(await types(log, stream.deviceProfile("dp1"))).toEqual(["DeviceProfileCreated", "DeviceProfileArqsCreated"]);
    const recorded = (await log.readStream(stream.deviceProfile("dp1")))[1]!.data as { arqUuids: string[] };
    expect(recorded.arqUuids).toEqual(arqs.map((a) => a.uuid));
  });

  it("undoes the ARQs when the profile was deleted meanwhile", async () => {
    const { log, app } = await world(1, (l) => new Application({ store: l }).deleteDeviceProfiles(ADMIN, { names: ["dp1"] }));
    const created = app.createArqs(ctx(), { deviceProfileName: "dp1" });
    await expect(created).rejects.toMatchObject({ code: "NOT_FOUND" });
    const arqStreams = (await log.readAll()).filter((e) => e.type === "ArqCreated").map((e) => e.stream);
    expect(arqStreams).toHaveLength(2);
    for (const s of arqStreams) expect(await types(log, s)).toEqual(["ArqCreated", "ArqDeleted"]);
  });
});
