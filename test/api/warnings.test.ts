import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_HOST_DEVICES, startTestService, type TestService } from "./harness.js";
import * as op from "./operations.js";

/** A mutation that succeeded says, in extensions.warnings, what it rewrote and what cannot take effect yet. */
describe("warnings in the answer", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(1) });
  });
  afterAll(() => t?.close());

  const create = (name: string, group: Record<string, string>) =>
    t.gql("admin", `mutation($input: DeviceProfileInput!) { createDeviceProfile(input: $input) { groups } }`, { input: { name, groups: [group] } }) as Promise<{
      data?: { createDeviceProfile: { groups: unknown[] } };
      extensions?: { warnings?: string[] };
    }>;

  it("names the trait stored in another form than sent", async () => {
    const r = await create("fake", { "resources:FPGA": "1", "trait:custom_fake_device": "required" });
    expect(r.data!.createDeviceProfile.groups).toEqual([{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }]);
    expect(r.extensions?.warnings).toEqual(['groups[0]: key "trait:custom_fake_device" is stored as "trait:CUSTOM_FAKE_DEVICE"']);
  });

  it("names a required trait that no host reports", async () => {
    const r = await create("typo", { "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVCE": "required" });
    expect(r.data).toBeDefined();
    expect(r.extensions?.warnings).toHaveLength(1);
    expect(r.extensions!.warnings![0]).toMatch(/no host reports trait CUSTOM_FAKE_DEVCE yet/);
  });

  it("sees a trait a host reported since the last check", async () => {
    const late = { "resources:FPGA": "1", "trait:CUSTOM_LATE_DEVICE": "required" };
    expect((await create("late-1", late)).extensions?.warnings).toEqual([expect.stringMatching(/no host reports trait CUSTOM_LATE_DEVICE yet/)]);
    // compute1 reports a second card, with that trait.
    const [card] = FAKE_HOST_DEVICES(1);
    const second = { ...card!, controlPath: { type: "PCI", info: { ...card!.controlPath.info, bus: "0d" } } };
    second.deployables = [{ ...card!.deployables[0]!, name: "compute1_LateDevice", attachHandles: [{ type: "TEST_PCI", info: { domain: "0000", bus: "0d", device: "00", function: "0" } }], attributes: [{ key: "rc", value: "FPGA" }, { key: "trait0", value: "CUSTOM_LATE_DEVICE" }] }];
    await t.ok("agent", op.REPORT, { hostname: "compute1", devices: [card, second] });
    expect((await create("late-2", late)).extensions?.warnings).toBeUndefined();
  });

  it("says nothing when the input is taken as sent and can take effect", async () => {
    const r = await create("plain", { "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" });
    expect(r.data).toBeDefined();
    expect(r.extensions?.warnings).toBeUndefined();
  });
});
