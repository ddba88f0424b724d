/** os-acc's typed errors: a hypervisor driver catches them by class, a hook in another language by `code`. */
export class OsAccError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** The offending input field, when there is one. */
    readonly field?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON() {
    return { code: this.code, message: this.message, ...(this.field ? { field: this.field } : {}) };
  }
}

/** The host's agent has not reported its inventory in time (the seed's CyborgAgentUnavailable). */
export class AgentUnavailable extends OsAccError {
  constructor(message: string) {
    super("AGENT_UNAVAILABLE", message);
  }
}

/** An instance operation the service refuses: live migration, boot from snapshot. */
export class UnsupportedOperation extends OsAccError {
  constructor(message: string) {
    super("UNSUPPORTED_OPERATION", message, "operation");
  }
}

/** The request was refused as it stands: fix the input (the field says where). */
export class BadRequest extends OsAccError {
  constructor(message: string, field?: string) {
    super("BAD_USER_INPUT", message, field);
  }
}

/** An accelerator could not be bound; what the plug took was released. */
export class BindFailed extends OsAccError {
  constructor(message: string, readonly reasons: Array<{ arqUuid: string; reason: string | null }>) {
    super("BIND_FAILED", message);
  }
}

/** The service refused or could not be reached; `code` is the service's error code (or SERVICE_UNAVAILABLE, TIMEOUT). */
export class ServiceError extends OsAccError {}

/** The error for a service answer with GraphQL code `code`. */
export function fromServiceError(code: string | undefined, message: string, field?: string): OsAccError {
  switch (code) {
    case "BAD_USER_INPUT":
      return new BadRequest(message, field);
    case "UNSUPPORTED_OPERATION":
      return new UnsupportedOperation(message);
    default:
      return new ServiceError(code ?? "SERVICE_ERROR", message, field);
  }
}
