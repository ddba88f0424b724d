/** Vocabulary shared by every aggregate. Values match the GraphQL enums of docs/graphql-api.md. */
/** HPTS: High Precision Time Synchronization cards (agent-driver spec), beside Cyborg's six. */
export const DEVICE_TYPES = ["GPU", "FPGA", "AICHIP", "QAT", "NIC", "SSD", "HPTS"] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

export const DEVICE_STATUSES = ["ENABLED", "MAINTAINING"] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/** MIG: an NVIDIA MIG device (info: uuid, gpu_bdf, gpu_instance_id, compute_instance_id), made at bind. */
export const ATTACH_HANDLE_TYPES = ["PCI", "MDEV", "TEST_PCI", "MIG"] as const;
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
  /** A token's name, or "<roles>:<hash prefix>" (never a token secret), or "system:<component>". */
  principal: string;
  /** The principal's roles, recorded with its events so an audit can say "nova (service)". */
  roles?: readonly string[];
  correlationId: string;
  causationId: string;
  /** ISO-8601 time. */
  at: string;
  /** The caller's project (ARQs belong to it). */
  projectId?: string | null;
  /** Sees and acts on every project's ARQs (admin and service principals). */
  isAdmin?: boolean;
  /**
   * Run again under an idempotency key whose earlier attempt may have written part of its work:
   * commands that can tell converge on it (ARQs and profiles with the ids that attempt used).
   */
  resuming?: boolean;
  /**
   * The project of the request this command serves, when it is not the caller's own (a reactor's
   * step carries the project of the request it answers): recorded with each event, so that a
   * trace groups a correlation id's events by the project that sent them.
   */
  requestProject?: string | null;
}

/** A business rule refused the command. `code` maps 1:1 onto GraphQL `extensions.code`. */
export class DomainError extends Error {
  constructor(
    readonly code: "BAD_USER_INPUT" | "NOT_FOUND" | "CONFLICT" | "FORBIDDEN" | "UNSUPPORTED_OPERATION" | "QUOTA_EXCEEDED" | "PROFILE_DISABLED",
    message: string,
    /** The offending input field, for BAD_USER_INPUT (e.g. "groups[0].resources:FPGA"). */
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/** Longest id in a stream name (the embedded log keys streams by name). */
export const MAX_ID_LENGTH = 255;

/**
 * The stream of each aggregate, by its id. The last guard before the log: an id that is not a
 * string of 1 to MAX_ID_LENGTH characters is refused here (use cases check their inputs first,
 * naming the field as the caller sent it).
 */
export const stream = {
  deviceProfile: (name: string) => `deviceProfile-${id(name, "name")}`,
  deviceProfileUuid: (uuid: string) => `deviceProfileUuid-${id(uuid, "uuid")}`,
  host: (hostname: string) => `host-${id(hostname, "hostname")}`,
  arq: (uuid: string) => `arq-${id(uuid, "arqUuid")}`,
  instance: (uuid: string) => `instance-${id(uuid, "instanceUuid")}`,
  /** The embedded bitstream catalogue: one stream (uploads are rare; its revision keeps ids unique). */
  bitstreams: () => "bitstreams-catalogue",
  /** One per idempotency key (its hash: 64 hex digits). */
  idempotency: (keyHash: string) => `idempotency-${id(keyHash, "idempotencyKey")}`,
  /** One per project: its quota limits and the claims of its ARQs. */
  quota: (projectId: string) => `quota-${id(projectId, "projectId")}`,
} as const;

/** What each aggregate's stream names start with (for filters over the whole log). */
export const streamPrefix = {
  deviceProfile: "deviceProfile-",
  deviceProfileUuid: "deviceProfileUuid-",
  host: "host-",
  arq: "arq-",
  instance: "instance-",
  bitstreams: "bitstreams-catalogue",
  idempotency: "idempotency-",
  quota: "quota-",
} as const satisfies Record<keyof typeof stream, string>;

function id(value: unknown, field: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_ID_LENGTH) {
    const shown = typeof value === "string" ? `${value.length} characters` : typeof value;
    throw new DomainError("BAD_USER_INPUT", `${field} must be a string of 1 to ${MAX_ID_LENGTH} characters (got ${shown})`, field);
  }
  return value;
}
