import { describe, expect, it } from "vitest";
import { fakeDriver } from "../../../src/clients/agent/drivers/fake.js";
import { fixtureEnv } from "./fixture-env.js";

describe("fake driver", () => {
  it("reports Cyborg's fake FPGA on any host", async () => {
    const [device, ...rest] = await fakeDriver.discover(fixtureEnv("no-accelerators"));
    expect(rest).toEqual([]);
    expect(device).toMatchObject({
      type: "FPGA",
      vendor: "0xABCD",
      model: "miss model info",
      stdBoardInfo: { device_id: "0xabcd", class: "Fake class" },
      vendorBoardInfo: { info: "fake_vendor_info" },
      controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
      stub: false,
    });
    expect(device!.deployables).toHaveLength(1);
    const dep = device!.deployables[0]!;
    expect(dep).toMatchObject({ name: "compute1_FakeDevice", numAccelerators: 16, driverName: "fake" });
    expect(dep.attributes).toEqual([
      { key: "rc", value: "FPGA" },
      { key: "trait0", value: "CUSTOM_FAKE_DEVICE" },
    ]);
  });

  it("spreads 16 TEST_PCI handles over device/function on bus 0c, function numbers 1..16", async () => {
    const [device] = await fakeDriver.discover(fixtureEnv("no-accelerators"));
    const handles = device!.deployables[0]!.attachHandles;
    expect(handles).toHaveLength(16);
    expect(handles.every((h) => h.type === "TEST_PCI" && h.info.domain === "0000" && h.info.bus === "0c")).toBe(true);
    expect(handles.map((h) => `${String(h.info.device)}.${String(h.info.function)}`)).toEqual([
      "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7",
      "1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7",
      "2.0",
    ]);
  });

  it("replaces characters Placement refuses in the host part of the name", async () => {
    const [device] = await fakeDriver.discover(fixtureEnv("no-accelerators", { hostname: "compute-1.example.org" }));
    expect(device!.deployables[0]!.name).toBe("compute-1_example_org_FakeDevice");
  });
});
