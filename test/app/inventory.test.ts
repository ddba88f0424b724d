import { describe, expect, it } from "vitest";
import { stream } from "../../src/domain/shared/types.js";
import { expectDomainRejection } from "../domain/decider-spec.js";
import { ADMIN, fpga, hostState, setup, types } from "./support.js";

const agent = { ...ADMIN, principal: "agent:compute1", isAdmin: false };

describe("host inventory (application)", () => {
  it("reports device-level counts and the host stream's revision", async () => {
    const { app, store } = setup();
    const first = await app.reportHostInventory(agent, "compute1", [fpga("compute1", "af", 2), fpga("compute1", "b0")]);
    expect(first).toEqual({ hostname: "compute1", added: 2, updated: 0, removed: 0, unchanged: 0, revision: 8 });
    expect((await store.readStream(stream.host("compute1"))).length).toBe(9);
    const same = await app.reportHostInventory(agent, "compute1", [fpga("compute1", "af", 2), fpga("compute1", "b0")]);
    expect(same).toEqual({ hostname: "compute1", added: 0, updated: 0, removed: 0, unchanged: 2, revision: 8 });
    const next = await app.reportHostInventory(agent, "compute1", [fpga("compute1", "af", 3), fpga("compute1", "c0")]);
    expect(next).toMatchObject({ added: 1, updated: 1, removed: 1, unchanged: 0 });
  });
  it("answers revision -1 for an empty report of an unknown host", async () => {
    const { app, store } = setup();
    expect(await app.reportHostInventory(agent, "compute9", [])).toEqual({ hostname: "compute9", added: 0, updated: 0, removed: 0, unchanged: 0, revision: -1 });
    expect(await store.headPosition()).toBeUndefined();
  });
  it("refuses a bad hostname or a bad report with BAD_USER_INPUT and writes nothing", async () => {
    const { app, store } = setup();
    await expectDomainRejection(app.reportHostInventory(agent, "bad host", []), "BAD_USER_INPUT", "hostname");
    const bad = { ...fpga("compute1", "af"), type: "TPU" } as never;
    await expectDomainRejection(app.reportHostInventory(agent, "compute1", [fpga("compute1", "b0"), bad]), "BAD_USER_INPUT", "devices[1].type");
    expect(await store.headPosition()).toBeUndefined();
  });
  it("sets a device's status once", async () => {
    const { app, store } = setup();
    await app.reportHostInventory(agent, "compute1", [fpga("compute1", "af")]);
    const deviceUuid = [...(await hostState(store, "compute1")).devices.keys()][0]!;
    await app.setDeviceStatus(ADMIN, "compute1", deviceUuid, "MAINTAINING");
    await app.setDeviceStatus(ADMIN, "compute1", deviceUuid, "MAINTAINING");
    expect((await types(store, stream.host("compute1"))).filter((t) => t === "DeviceStatusChanged")).toHaveLength(1);
    await expectDomainRejection(app.setDeviceStatus(ADMIN, "compute1", "nope", "ENABLED"), "NOT_FOUND", "uuid");
    await expectDomainRejection(app.setDeviceStatus(ADMIN, "compute2", deviceUuid, "ENABLED"), "NOT_FOUND", "uuid");
  });
  it("concurrent reports of one host converge to one tree without duplicate events", async () => {
    const { app, store } = setup();
    const devices = [fpga("compute1", "af", 4)];
    const results = await Promise.all([1, 2, 3, 4].map(() => app.reportHostInventory(agent, "compute1", devices)));
    expect(results.map((r) => r.added).sort()).toEqual([0, 0, 0, 1]);
    expect(await types(store, stream.host("compute1"))).toHaveLength(1 + 1 + 1 + 4); // device, deployable, rc, 4 handles
  });
});
