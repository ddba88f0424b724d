/**
 * One type per concept: what a mutation answers (the application, from the log) and what a query
 * answers (the read model) are the same view of an ARQ or a profile, field for field, at every step.
 */
import { describe, expect, it } from "vitest";
import { getArqs } from "../../projections/arqs/queries.js";
import { getProfileByName } from "../../projections/device-profiles/queries.js";
import { projections } from "../../projections/index.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { Projector } from "../../src/reactors/projector/projector.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { ADMIN, ctx, fpga, setup } from "../app/support.js";

describe("the log and the read models tell one story", () => {
  it("an ARQ's view is the same from the application and from the arqs read model, through its whole life", async () => {
    const { app, store } = setup();
    const nova = ctx();
    const readStore = new MemoryReadStore();
    const projector = new Projector({ events: store, store: readStore, projections });
    await projector.start();
    try {
      await app.reportHostInventory({ ...ADMIN, principal: "agent:compute1" }, "compute1", [fpga("compute1", "af", 1)]);
      const profile = await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }] });
      await projector.caughtUp();
      expect(await getProfileByName(readStore, "dp1")).toEqual(profile);

      const [a, b] = await app.createArqs(nova, { deviceProfileName: "dp1" });
      const same = async (...views: unknown[]) => {
        await projector.caughtUp();
        const uuids = (views as Array<{ uuid: string }>).map((v) => v.uuid);
        expect(await getArqs(readStore, uuids)).toEqual(views);
      };
      await same(a, b);
      const rp = rpUuidFor("compute1_0000:af:00.0");
      const bound = await app.startBinds(nova, [a, b].map((x, i) => ({ arqUuid: x!.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: `vm-${i}` })), { allocate: true });
      expect(bound.map((v) => v.state)).toEqual(["BOUND", "BIND_STARTED"]);
      await same(...bound);
      const failed = await app.allocateForArq({ ...ADMIN, principal: "system:binder" }, b!.uuid);
      expect(failed.ok).toBe(false);
      await same(...bound.slice(0, 1), await app.getArq(b!.uuid));
      await same(...(await app.unbindArqs(nova, [a!.uuid, b!.uuid])));
    } finally {
      await projector.stop();
    }
  });
});
