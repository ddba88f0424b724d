/**
 * What a hypervisor needs to attach one accelerator: the PCI address of a PCI handle, the mdev
 * uuid of a vGPU, the attach info as the service gives it, and libvirt's <hostdev> element. The
 * group's `accel:attach_target` decides what is attached: VM (the default) passes the device
 * through to the instance (a <hostdev>); host leaves it to the compute node (its address, no
 * <hostdev>); none attaches nothing (the accelerator is held for the instance, reached indirectly).
 */
export interface AttachedAccelerator {
  arqUuid: string;
  deviceProfileGroupId: number;
  attachTarget: AttachTarget;
  attachHandleType: string;
  attachHandleUuid: string;
  attachInfo: Record<string, string>;
  /** "0000:af:00.1" for PCI (and the fake driver's TEST_PCI) handles; not for attachTarget none. */
  pciId?: string;
  /** The mediated device's uuid, for MDEV handles; not for attachTarget none. */
  mdevUuid?: string;
  /** A libvirt <hostdev> element for the domain XML; null unless attachTarget is VM. */
  hostdevXml: string | null;
}

export type AttachTarget = "VM" | "host" | "none";

export interface BoundArq {
  uuid: string;
  deviceProfileGroupId: number;
  /** Absent from a service that predates it: VM. */
  attachTarget?: AttachTarget;
  attachHandleType: string;
  attachHandleUuid: string;
  attachHandleInfo: Record<string, string>;
}

export function attachedAccelerator(arq: BoundArq): AttachedAccelerator {
  const info = arq.attachHandleInfo;
  const attachTarget = arq.attachTarget ?? "VM";
  const base = { arqUuid: arq.uuid, deviceProfileGroupId: arq.deviceProfileGroupId, attachTarget, attachHandleType: arq.attachHandleType, attachHandleUuid: arq.attachHandleUuid, attachInfo: info };
  if (attachTarget === "none") return { ...base, hostdevXml: null };
  const vm = attachTarget === "VM";
  if (arq.attachHandleType === "MDEV") {
    return { ...base, mdevUuid: arq.attachHandleUuid, hostdevXml: vm ? mdevHostdev(arq.attachHandleUuid) : null };
  }
  const pciId = `${hex(info.domain, 4)}:${hex(info.bus, 2)}:${hex(info.device, 2)}.${hex(info.function, 1)}`;
  return { ...base, pciId, hostdevXml: vm ? pciHostdev(info) : null };
}

/** A PCI function passed through to the guest (libvirt manages its driver binding). */
export function pciHostdev(info: Record<string, string>): string {
  const attr = (name: string, value: string | undefined, width: number) => `${name}='0x${hex(value, width)}'`;
  return (
    `<hostdev mode='subsystem' type='pci' managed='yes'><source><address ` +
    `${attr("domain", info.domain, 4)} ${attr("bus", info.bus, 2)} ${attr("slot", info.device, 2)} ${attr("function", info.function, 1)}` +
    `/></source></hostdev>`
  );
}

/** A mediated device (vGPU) by its uuid. */
export function mdevHostdev(uuid: string): string {
  return `<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='${xmlAttr(uuid)}'/></source></hostdev>`;
}

/** A hex field of a PCI address, zero-padded; refuses anything else rather than write bad XML. */
function hex(value: string | undefined, width: number): string {
  if (typeof value !== "string" || !/^(0x)?[0-9a-fA-F]{1,4}$/.test(value)) throw new Error(`not a PCI address field: ${JSON.stringify(value)}`);
  return value.replace(/^0x/, "").toLowerCase().padStart(width, "0");
}

function xmlAttr(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/'/g, "&apos;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
