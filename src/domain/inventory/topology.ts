/**
 * A device's topology in a host report (topology-report.ts): its validation and the part of the
 * report's diff it writes. DeviceTopologyChanged is written only when the reported topology
 * differs from the recorded one, so a report that holds still writes nothing and the report's
 * digest short-cut holds. A device whose driver reports no topology keeps what was recorded.
 */
import { DomainError } from "../shared/types.js";
import type { InventoryEvent } from "./events.js";
import type { DeviceTopology } from "./topology-report.js";

/** NUMA node ids as Linux numbers them (MAX_NUMNODES is at most 1024). */
export const MAX_NUMA_NODE = 1023;
export const MAX_LINK_DOMAIN_LENGTH = 100;
const PCI_ADDRESS_RE = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;
const LINK_DOMAIN_RE = /^[A-Za-z0-9][A-Za-z0-9:._\/-]*$/;

const bad = (field: string, message: string) => new DomainError("BAD_USER_INPUT", message, field);

/** The reported topology, normalised (PCI addresses in lower case); null when the report carries none. */
export function validateTopology(raw: unknown, field: string): DeviceTopology | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) throw bad(field, "topology must be an object {numaNode, pcieRoot, pcieSwitch, linkDomain}");
  const t = raw as Record<string, unknown>;
  return {
    numaNode: numaNode(t.numaNode, `${field}.numaNode`),
    pcieRoot: pciAddress(t.pcieRoot, `${field}.pcieRoot`),
    pcieSwitch: pciAddress(t.pcieSwitch, `${field}.pcieSwitch`),
    linkDomain: linkDomain(t.linkDomain, `${field}.linkDomain`),
  };
}

function numaNode(v: unknown, field: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0 || v > MAX_NUMA_NODE) {
    throw bad(field, `a NUMA node is an integer from 0 to ${MAX_NUMA_NODE}, or null when the host has none (sysfs numa_node -1); got ${JSON.stringify(v)}`);
  }
  return v;
}

function pciAddress(v: unknown, field: string): string | null {
  if (v === undefined || v === null) return null;
  const lower = typeof v === "string" ? v.toLowerCase() : "";
  if (!PCI_ADDRESS_RE.test(lower)) throw bad(field, `a PCIe port is a PCI address such as "0000:00:01.0" (domain:bus:device.function); got ${JSON.stringify(v)}`);
  return lower;
}

function linkDomain(v: unknown, field: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.length > MAX_LINK_DOMAIN_LENGTH || !LINK_DOMAIN_RE.test(v)) {
    throw bad(field, `a link domain is 1 to ${MAX_LINK_DOMAIN_LENGTH} letters, digits and ":._/-" (such as "nvlink:0000:07:00.0"); got ${JSON.stringify(v)}`);
  }
  return v;
}

export function sameTopology(a: DeviceTopology | null, b: DeviceTopology | null): boolean {
  if (a === null || b === null) return a === b;
  return a.numaNode === b.numaNode && a.pcieRoot === b.pcieRoot && a.pcieSwitch === b.pcieSwitch && a.linkDomain === b.linkDomain;
}

/** The events a reported topology writes for this device: none when it was not reported or did not change. */
export function topologyEvents(hostname: string, deviceUuid: string, recorded: DeviceTopology | null, reported: DeviceTopology | undefined, at: string): InventoryEvent[] {
  if (reported === undefined || sameTopology(recorded, reported)) return [];
  return [{ type: "DeviceTopologyChanged", data: { hostname, deviceUuid, topology: reported, at } }];
}
