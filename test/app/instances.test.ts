import { describe, expect, it } from "vitest";
import { inlineProfileName } from "../../src/domain/device-profiles/inline.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import { expectDomainRejection } from "../domain/decider-spec.js";
import { ADMIN, ctx, fpga, hostState, setup, types } from "./support.js";

const HOST = "compute1";
const RP = rpUuidFor(`${HOST}_0000:af:00.0`);
const nova = ctx({ principal: "nova", projectId: "service", isAdmin: true });
const agent = { ...ADMIN, principal: "agent:compute1" };

async function boundInstance(instanceUuid = "vm-1") {
  const w = setup();
  await w.app.reportHostInventory(agent, HOST, [fpga(HOST, "af", 2)]);
  await w.app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
  const [arq] = await w.app.createArqs(nova, { deviceProfileName: "dp1" });
  await w.app.startBinds(nova, [{ arqUuid: arq!.uuid, hostname: HOST, deviceRpUuid: RP, instanceUuid }], { allocate: true });
  return { ...w, arq: arq! };
}

describe("instance operations (application)", () => {
  it("an operation that keeps the accelerators records itself and releases nothing", async () => {
    const { app, store, arq } = await boundInstance();
    expect(await app.recordInstanceOperation(nova, "vm-1", "reboot")).toEqual({ operation: "reboot", effect: "keep", released: [] });
    expect((await app.getArq(arq.uuid))!.state).toBe("BOUND");
    expect(await types(store, stream.instance("vm-1"))).toEqual(["InstanceArqsBound", "InstanceOperationRecorded"]);
    const recorded = (await store.readStream(stream.instance("vm-1"))).at(-1)!;
    expect(recorded.metadata.principal).toBe("nova");
  });
  it("shelve releases every accelerator of the instance: ARQs deleted, handles freed", async () => {
    const { app, store, arq } = await boundInstance();
    expect(await app.recordInstanceOperation(nova, "vm-1", "shelve")).toEqual({ operation: "shelve", effect: "release", released: [arq.uuid] });
    expect(await app.getArq(arq.uuid)).toBeNull();
    expect((await hostState(store, HOST)).allocations.size).toBe(0);
    expect(await app.recordInstanceOperation(nova, "vm-1", "shelve")).toMatchObject({ released: [] });
  });
  it("stop releases the accelerators; start then plugs again on the same host", async () => {
    const { app, arq, store } = await boundInstance();
    expect(await app.recordInstanceOperation(nova, "vm-1", "stop")).toEqual({ operation: "stop", effect: "release", released: [arq.uuid] });
    expect(await app.getArq(arq.uuid)).toBeNull();
    expect((await hostState(store, HOST)).allocations.size).toBe(0);
    expect(await app.recordInstanceOperation(nova, "vm-1", "start")).toEqual({ operation: "start", effect: "plug", released: [] });
    const [again] = await app.createArqs(nova, { deviceProfileName: "dp1" });
    await app.startBinds(nova, [{ arqUuid: again!.uuid, hostname: HOST, deviceRpUuid: RP, instanceUuid: "vm-1" }], { allocate: true });
    expect((await app.getArq(again!.uuid))!.state).toBe("BOUND");
  });
  it("a refused operation writes nothing", async () => {
    const { app, store } = await boundInstance();
    const head = await store.headPosition();
    await expectDomainRejection(app.recordInstanceOperation(nova, "vm-1", "live-migrate"), "UNSUPPORTED_OPERATION", "operation");
    expect(await store.headPosition()).toBe(head);
  });
});

describe("ARQs for inline specs", () => {
  it("makes the content-named profile once and creates the ARQs from it", async () => {
    const { app, store } = setup();
    const groups: Array<Record<string, string>> = [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }, { "resources:FPGA": "1" }];
    const [a, b] = await Promise.all([app.createArqsForGroups(nova, groups), app.createArqsForGroups(nova, structuredClone(groups))]);
    const name = inlineProfileName(groups);
    expect([...a!, ...b!].map((x) => x.deviceProfileName)).toEqual([name, name, name, name]);
    expect(a!.map((x) => x.deviceProfileGroupId)).toEqual([0, 1]);
    expect(await types(store, stream.deviceProfile(name))).toEqual(["DeviceProfileCreated", "DeviceProfileArqsCreated", "DeviceProfileArqsCreated"]);
    expect((await app.getDeviceProfileFromLog(name))!.groups).toEqual(groups);
  });
  it("validates the groups as a profile's, naming the field", async () => {
    const { app } = setup();
    await expectDomainRejection(app.createArqsForGroups(nova, [{ "resources:FPGA": "0" }]), "BAD_USER_INPUT", "groups[0].resources:FPGA");
    await expectDomainRejection(app.createArqsForGroups(nova, []), "BAD_USER_INPUT", "groups");
  });
});

describe("host status", () => {
  it("says whether the host's agent reported, even an empty host", async () => {
    const { app } = setup();
    expect(await app.hostStatus("compute1")).toEqual({ hostname: "compute1", reported: false, devices: 0, programmingInProgress: 0, revision: -1, liveness: expect.objectContaining({ state: "STALE", lastReportAt: null }) });
    await app.reportHostInventory(agent, "compute1", [fpga(HOST, "af", 1)]);
    expect(await app.hostStatus("compute1")).toMatchObject({ reported: true, devices: 1, programmingInProgress: 0 });
    await app.reportHostInventory({ ...agent, principal: "agent:empty" }, "empty", []);
    expect(await app.hostStatus("empty")).toMatchObject({ reported: true, devices: 0, revision: -1 });
    await expectDomainRejection(app.hostStatus("bad host"), "BAD_USER_INPUT", "hostname");
  });
});
