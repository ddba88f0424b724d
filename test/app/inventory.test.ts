import { describe, expect, it, vi } from "vitest";
import { Application } from "../../src/app/application.js";
import { reportDigest } from "../../src/domain/inventory/digest.js";
import { rpUuidFor } from "../../src/domain/inventory/ids.js";
import { stream } from "../../src/domain/shared/types.js";
import { expectDomainRejection } from "../domain/decider-spec.js";
import { ADMIN, ctx, fpga, hostState, setup, types } from "./support.js";

const agent = { ...ADMIN, principal: "agent:compute1", isAdmin: false };

describe("host inventory (application)", () => {
  it("reports device-level counts and the host stream's revision", async () => {
    const { app, store } = setup();
    const devices = [fpga("compute1", "af", 2), fpga("compute1", "b0")];
    const digest = reportDigest(devices);
    const first = await app.reportHostInventory(agent, "compute1", devices);
    expect(first).toEqual({ hostname: "compute1", added: 2, updated: 0, removed: 0, unchanged: 0, revision: 9, digest });
    const written = await store.readStream(stream.host("compute1"));
    expect(written.length).toBe(10);
    // The append ends with the report's digest, for confirmations by any process.
    expect(written.at(-1)).toMatchObject({ type: "HostReportSettled", data: { hostname: "compute1", digest, unchanged: 2 } });
    const same = await app.reportHostInventory(agent, "compute1", devices);
    expect(same).toEqual({ hostname: "compute1", added: 0, updated: 0, removed: 0, unchanged: 2, revision: 9, digest });
    const next = await app.reportHostInventory(agent, "compute1", [fpga("compute1", "af", 3), fpga("compute1", "c0")]);
    expect(next).toMatchObject({ added: 1, updated: 1, removed: 1, unchanged: 0 });
  });
  it("keeps a device's several control paths and nested attributes; the same report again writes nothing, a refused one nothing either", async () => {
    const { app, store } = setup();
    const base = fpga("compute1", "d8");
    const card = {
      ...base,
      type: "HPTS" as const,
      additionalControlPaths: [{ type: "PCI", info: { domain: "0000", bus: "d8", device: "00", function: "1" } }],
      deployables: [{ ...base.deployables[0]!, attributes: [{ key: "rc", value: "CUSTOM_HPTS" }, { key: "clock", value: "ptp" }, { key: "accuracy", value: "100ns", parentKey: "clock" }] }],
    };
    expect(await app.reportHostInventory(agent, "compute1", [card])).toMatchObject({ added: 1 });
    const device = [...(await hostState(store, "compute1")).devices.values()][0]!;
    expect(device.type).toBe("HPTS");
    expect(device.additionalControlPaths.map((c) => c.info.function)).toEqual(["1"]);
    const attrs = [...device.deployables.values()][0]!.attributes;
    expect(attrs.get("accuracy")!.parentUuid).toBe(attrs.get("clock")!.uuid);
    const head = await store.headPosition();
    expect(await app.reportHostInventory(agent, "compute1", [card])).toMatchObject({ unchanged: 1 });
    const clash = { ...fpga("compute1", "e0"), controlPath: card.additionalControlPaths[0]! };
    await expectDomainRejection(app.reportHostInventory(agent, "compute1", [card, clash]), "BAD_USER_INPUT", "devices[1].controlPath.info");
    expect(await store.headPosition()).toBe(head);
  });
  it("answers revision -1 for an empty report of an unknown host", async () => {
    const { app, store } = setup();
    expect(await app.reportHostInventory(agent, "compute9", [])).toEqual({
      hostname: "compute9",
      added: 0,
      updated: 0,
      removed: 0,
      unchanged: 0,
      revision: -1,
      digest: reportDigest([]),
    });
    expect(await store.headPosition()).toBeUndefined();
  });
  it("refuses a bad hostname or a bad report with BAD_USER_INPUT and writes nothing", async () => {
    const { app, store } = setup();
    await expectDomainRejection(app.reportHostInventory(agent, "bad host", []), "BAD_USER_INPUT", "hostname");
    const bad = { ...fpga("compute1", "af"), type: "TPU" } as never;
    await expectDomainRejection(app.reportHostInventory(agent, "compute1", [fpga("compute1", "b0"), bad]), "BAD_USER_INPUT", "devices[1].type");
    expect(await store.headPosition()).toBeUndefined();
  });
  it("sets a device's status once, as the maintenance taint by the caller", async () => {
    const { app, store } = setup();
    await app.reportHostInventory(agent, "compute1", [fpga("compute1", "af")]);
    const deviceUuid = [...(await hostState(store, "compute1")).devices.keys()][0]!;
    await app.setDeviceStatus(ADMIN, "compute1", deviceUuid, "MAINTAINING");
    await app.setDeviceStatus(ADMIN, "compute1", deviceUuid, "MAINTAINING");
    expect((await types(store, stream.host("compute1"))).filter((t) => t === "DeviceTainted")).toHaveLength(1);
    expect((await hostState(store, "compute1")).devices.get(deviceUuid)!.taints).toMatchObject([{ key: "cyborg.openstack.org/maintenance", by: ADMIN.principal }]);
    await expectDomainRejection(app.setDeviceStatus(ADMIN, "compute1", "nope", "ENABLED"), "NOT_FOUND", "uuid");
    await expectDomainRejection(app.setDeviceStatus(ADMIN, "compute2", deviceUuid, "ENABLED"), "NOT_FOUND", "uuid");
  });
  it("concurrent reports of one host converge to one tree without duplicate events", async () => {
    const { app, store } = setup();
    const devices = [fpga("compute1", "af", 4)];
    const results = await Promise.all([1, 2, 3, 4].map(() => app.reportHostInventory(agent, "compute1", devices)));
    expect(results.map((r) => r.added).sort()).toEqual([0, 0, 0, 1]);
    expect(await types(store, stream.host("compute1"))).toHaveLength(1 + 1 + 1 + 4 + 1); // device, deployable, rc, 4 handles, the settled digest
  });
});

describe("confirming a host's inventory (application)", () => {
  const HOST = "compute1";
  const devices = () => [fpga(HOST, "af", 2), fpga(HOST, "b0")];
  const digest = reportDigest(devices());
  const unchanged = (revision: number) => ({ hostname: HOST, added: 0, updated: 0, removed: 0, unchanged: 2, revision, digest });

  it("answers null until a report with that digest was taken, then what an identical report answers; writes nothing", async () => {
    const { app, store } = setup();
    expect(await app.confirmHostInventory(HOST, digest)).toBeNull();
    await app.reportHostInventory(agent, HOST, devices());
    const head = await store.headPosition();
    expect(await app.confirmHostInventory(HOST, digest)).toEqual(unchanged(9));
    expect(await app.confirmHostInventory(HOST, digest)).toEqual(await app.reportHostInventory(agent, HOST, devices()));
    expect(await app.confirmHostInventory(HOST, reportDigest([fpga(HOST, "af", 2)]))).toBeNull();
    expect(await app.confirmHostInventory("compute2", digest)).toBeNull();
    expect(await store.headPosition()).toBe(head);
  });

  it("answers null once the host changed another way, until the next full report", async () => {
    const { app, store } = setup();
    await app.reportHostInventory(agent, HOST, devices());
    const deviceUuid = [...(await hostState(store, HOST)).devices.keys()][0]!;
    await app.setDeviceStatus(ADMIN, HOST, deviceUuid, "MAINTAINING");
    expect(await app.confirmHostInventory(HOST, digest)).toBeNull();
    expect(await app.reportHostInventory(agent, HOST, devices())).toEqual(unchanged(10));
    expect(await app.confirmHostInventory(HOST, digest)).toEqual(unchanged(10));
    // Another process (or this one after a restart) has only the stream: it still sees the change.
    expect(await new Application({ store }).confirmHostInventory(HOST, digest)).toBeNull();
  });

  it("answers null after a different report, and for the new report's digest once taken", async () => {
    const { app } = setup();
    await app.reportHostInventory(agent, HOST, devices());
    const fewer = [fpga(HOST, "af", 2)];
    await app.reportHostInventory(agent, HOST, fewer);
    expect(await app.confirmHostInventory(HOST, digest)).toBeNull();
    expect(await app.confirmHostInventory(HOST, reportDigest(fewer))).toMatchObject({ added: 0, updated: 0, removed: 0, unchanged: 1 });
  });

  it("is not disturbed by allocations and releases", async () => {
    const { app } = setup();
    await app.reportHostInventory(agent, HOST, devices());
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
    const [arq] = await app.createArqs(ctx(), { deviceProfileName: "dp1" });
    const rp = rpUuidFor(`${HOST}_0000:af:00.0`);
    await app.startBinds(ctx(), [{ arqUuid: arq!.uuid, hostname: HOST, deviceRpUuid: rp, instanceUuid: "vm-1" }]);
    expect((await app.allocateForArq(ADMIN, arq!.uuid)).ok).toBe(true);
    expect(await app.confirmHostInventory(HOST, digest)).toEqual(unchanged(10));
    await app.releaseHandleForArq(ADMIN, HOST, arq!.uuid);
    expect(await app.confirmHostInventory(HOST, digest)).toEqual(unchanged(11));
  });

  it("answers after a restart from what the host stream recorded (a new Application over the same log), and writes nothing", async () => {
    const { app, store } = setup();
    await app.reportHostInventory(agent, HOST, devices());
    const head = await store.headPosition();
    const restarted = new Application({ store });
    expect(await restarted.confirmHostInventory(HOST, digest)).toEqual(unchanged(9));
    expect(await restarted.confirmHostInventory(HOST, reportDigest([fpga(HOST, "af", 2)]))).toBeNull();
    expect(await store.headPosition()).toBe(head);
  });

  it("after a restart, confirms from the host stream's last events (allocations and releases since are fine), without reading the stream from its start", async () => {
    const { app, store } = setup();
    await app.reportHostInventory(agent, HOST, devices());
    await app.createDeviceProfile(ADMIN, { name: "dp1", groups: [{ "resources:FPGA": "1" }] });
    const [arq] = await app.createArqs(ctx(), { deviceProfileName: "dp1" });
    await app.startBinds(ctx(), [{ arqUuid: arq!.uuid, hostname: HOST, deviceRpUuid: rpUuidFor(`${HOST}_0000:af:00.0`), instanceUuid: "vm-1" }]);
    expect((await app.allocateForArq(ADMIN, arq!.uuid)).ok).toBe(true);
    const reads = vi.spyOn(store, "readStream");
    const restarted = new Application({ store });
    expect(await restarted.confirmHostInventory(HOST, digest)).toEqual(unchanged(10));
    expect(reads.mock.calls.filter(([name]) => name === `host-${HOST}`).map(([, o]) => o?.direction)).toEqual(["backwards"]);
    // Another digest, or a change since the settled report: the fold answers, as before.
    expect(await new Application({ store }).confirmHostInventory(HOST, reportDigest([fpga(HOST, "af", 2)]))).toBeNull();
    const deviceUuid = [...(await hostState(store, HOST)).devices.keys()][0]!;
    await app.setDeviceStatus(ADMIN, HOST, deviceUuid, "MAINTAINING");
    expect(await new Application({ store }).confirmHostInventory(HOST, digest)).toBeNull();
  });

  it("refuses a bad hostname or a digest that is not v1: and 64 hex digits", async () => {
    const { app } = setup();
    await expectDomainRejection(app.confirmHostInventory("bad host", digest), "BAD_USER_INPUT", "hostname");
    await expectDomainRejection(app.confirmHostInventory(HOST, "v1:abc"), "BAD_USER_INPUT", "digest");
    await expectDomainRejection(app.confirmHostInventory(HOST, digest.slice(3)), "BAD_USER_INPUT", "digest");
  });
});
