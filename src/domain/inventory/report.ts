/**
 * What a host agent reports: the driver objects of cyborg-reference 5.1, in the shape of the
 * GraphQL inputs DriverDeviceInput & co. (docs/graphql-api.md). Drivers produce these; the
 * inventory decider diffs them against the host stream's tree.
 */
import type { DeviceType, JsonObject } from "../shared/types.js";
import type { HealthStatus } from "./health.js";
import type { DriverAttachHandle } from "./handle-report.js";
import type { DriverCapacity, DriverPartitioning } from "./partitioning-report.js";
import type { DeviceTopology } from "./topology-report.js";

export interface DriverAttribute {
  /** "rc", "trait0", "trait1", ... as Cyborg. */
  key: string;
  value: string;
  /**
   * The key of the attribute this one is nested under, on the same deployable (the database-model
   * spec's parent_attribute_id: "nested structured attribute relationships"); absent at the top.
   */
  parentKey?: string | null;
}

export interface DriverDeployable {
  /** Unique per host: `<host>_<BDF>` by convention; the RP uuid is uuid3(DNS, name). */
  name: string;
  numAccelerators: number;
  driverName?: string | null;
  /** Name of the parent deployable on the same device (nested regions/functions), if any. */
  parentName?: string | null;
  attributes: DriverAttribute[];
  attachHandles: DriverAttachHandle[];
}

export interface DriverControlPath {
  /** "PCI" */
  type: string;
  info: JsonObject;
}

/** A device's health as a driver reads it (health.ts's DeviceHealth, as the GraphQL input carries it). */
export interface DriverHealth {
  status: HealthStatus;
  reasons: Array<{ code: string; message: string; count?: number | null }>;
}

export interface DriverDevice {
  type: DeviceType;
  vendor: string;
  model: string;
  stdBoardInfo?: JsonObject | null;
  vendorBoardInfo?: JsonObject | null;
  /** The device's identity: devices are matched across reports by it. */
  controlPath: DriverControlPath;
  /**
   * The device's other control paths (the database-model spec: "a device may have more than one",
   * e.g. the other PCI functions of one card). Each belongs to this device alone in a report.
   */
  additionalControlPaths?: DriverControlPath[] | null;
  /** A known device that is not ready: neither added nor removed by this report. */
  stub?: boolean;
  /**
   * The device's health as the driver read it (health.ts); absent from drivers and agents that do
   * not report health, which leaves the recorded health as it is.
   */
  health?: DriverHealth | null;
  /** Where the device sits on the host (topology-report.ts); absent when the driver does not know. */
  topology?: DeviceTopology | null;
  /** The partitions the device can make and has made (partitioning-report.ts); absent for a device that is not cut. */
  partitioning?: DriverPartitioning | null;
  /** Amounts several ARQs draw from (partitioning-report.ts). */
  capacities?: DriverCapacity[] | null;
  deployables: DriverDeployable[];
}
