/** Vocabulary shared by every aggregate. Values match the GraphQL enums of docs/graphql-api.md. */
export const DEVICE_TYPES = ["GPU", "FPGA", "AICHIP", "QAT", "NIC", "SSD"] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

export const DEVICE_STATUSES = ["ENABLED", "MAINTAINING"] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

export const ATTACH_HANDLE_TYPES = ["PCI", "MDEV", "TEST_PCI"] as const;
export type AttachHandleType = (typeof ATTACH_HANDLE_TYPES)[number];

export const ARQ_STATES = ["INITIAL", "BIND_STARTED", "BOUND", "UNBOUND", "BIND_FAILED", "DELETING"] as const;
export type ArqState = (typeof ARQ_STATES)[number];

/** A PCI address as Cyborg's pci_str_to_json gives it: lower-case hex strings without 0x. */
export interface PciAddress {
  domain: string;
  bus: string;
  device: string;
  function: string;
}

/** A JSON object whose values are JSON (what the JSON scalar carries). */
export type JsonObject = { [key: string]: unknown };

/** Every command carries who, when and why; deciders never read a clock or make random ids. */
export interface CommandContext {
  principal: string;
  correlationId: string;
  causationId: string;
  /** ISO-8601 time. */
  at: string;
  /** The caller's project (ARQs belong to it). */
  projectId?: string | null;
  /** Sees and acts on every project's ARQs (admin and service principals). */
  isAdmin?: boolean;
}

/** A business rule refused the command. `code` maps 1:1 onto GraphQL `extensions.code`. */
export class DomainError extends Error {
  constructor(
    readonly code: "BAD_USER_INPUT" | "NOT_FOUND" | "CONFLICT" | "FORBIDDEN",
    message: string,
    /** The offending input field, for BAD_USER_INPUT (e.g. "groups[0].resources:FPGA"). */
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const stream = {
  deviceProfile: (name: string) => `deviceProfile-${name}`,
  deviceProfileUuid: (uuid: string) => `deviceProfileUuid-${uuid}`,
  host: (hostname: string) => `host-${hostname}`,
  arq: (uuid: string) => `arq-${uuid}`,
  instance: (uuid: string) => `instance-${uuid}`,
  /** The embedded bitstream catalogue: one stream (uploads are rare; its revision keeps ids unique). */
  bitstreams: () => "bitstreams-catalogue",
} as const;
