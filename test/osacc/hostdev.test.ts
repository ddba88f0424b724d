import { describe, expect, it } from "vitest";
import { attachedAccelerator } from "../../src/clients/osacc/index.js";

const arq = (attachHandleType: string, attachHandleInfo: Record<string, string>) => ({
  uuid: "a1",
  deviceProfileGroupId: 0,
  attachHandleType,
  attachHandleUuid: "2f2fd3e6-0000-4000-8000-000000000001",
  attachHandleInfo,
});

describe("os-acc: what a hypervisor attaches", () => {
  it("a PCI handle: its address and a managed PCI <hostdev>", () => {
    const a = attachedAccelerator(arq("PCI", { domain: "0000", bus: "af", device: "00", function: "1" }));
    expect(a.pciId).toBe("0000:af:00.1");
    expect(a.hostdevXml).toBe("<hostdev mode='subsystem' type='pci' managed='yes'><source><address domain='0x0000' bus='0xaf' slot='0x00' function='0x1'/></source></hostdev>");
    expect(a.mdevUuid).toBeUndefined();
  });
  it("the fake driver's TEST_PCI handle pads what it leaves short", () => {
    expect(attachedAccelerator(arq("TEST_PCI", { domain: "0000", bus: "0c", device: "1", function: "7" })).pciId).toBe("0000:0c:01.7");
  });
  it("an MDEV handle: the mdev uuid and an mdev <hostdev>", () => {
    const a = attachedAccelerator(arq("MDEV", { asked_type: "nvidia-223", domain: "0000", bus: "3b", device: "00", function: "0", vgpu_mark: "nvidia-223_0" }));
    expect(a.mdevUuid).toBe("2f2fd3e6-0000-4000-8000-000000000001");
    expect(a.hostdevXml).toBe("<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='2f2fd3e6-0000-4000-8000-000000000001'/></source></hostdev>");
    expect(a.pciId).toBeUndefined();
  });
  it("accel:attach_target: VM (the default) passes the device through; host gives its address and no <hostdev>; none attaches nothing", () => {
    const pci = { domain: "0000", bus: "af", device: "00", function: "1" };
    expect(attachedAccelerator(arq("PCI", pci))).toMatchObject({ attachTarget: "VM", hostdevXml: expect.stringContaining("<hostdev") });
    expect(attachedAccelerator({ ...arq("PCI", pci), attachTarget: "VM" }).hostdevXml).toContain("<hostdev");
    expect(attachedAccelerator({ ...arq("PCI", pci), attachTarget: "host" })).toMatchObject({ attachTarget: "host", pciId: "0000:af:00.1", hostdevXml: null });
    expect(attachedAccelerator({ ...arq("MDEV", pci), attachTarget: "host" })).toMatchObject({ mdevUuid: "2f2fd3e6-0000-4000-8000-000000000001", hostdevXml: null });
    const none = attachedAccelerator({ ...arq("PCI", pci), attachTarget: "none" });
    expect(none).toMatchObject({ attachTarget: "none", hostdevXml: null, attachHandleUuid: "2f2fd3e6-0000-4000-8000-000000000001" });
    expect(none.pciId).toBeUndefined();
  });
  it("refuses an address it cannot write as XML", () => {
    expect(() => attachedAccelerator(arq("PCI", { domain: "0000", bus: "af'/><evil", device: "00", function: "0" }))).toThrow(/not a PCI address field/);
  });
});
