/**
 * What can go wrong talking to Placement, typed so the sync knows whether to wait (Placement is
 * down: every host waits, the log is not skipped) or to set one host aside (Placement refused
 * something about that host's providers: the others go on). Messages name the provider and quote
 * Placement's answer.
 */

/** Placement's error codes (placement/errors.py) that the sync acts on. */
export const PLACEMENT_CODES = {
  concurrentUpdate: "placement.concurrent_update",
  inventoryInUse: "placement.inventory.inuse",
  providerInUse: "placement.resource_provider.inuse",
  cannotDeleteParent: "placement.resource_provider.cannot_delete_parent",
  duplicateName: "placement.duplicate_name",
} as const;

export interface ProviderRef {
  uuid: string;
  name: string;
}

export interface PlacementAnswer {
  method: string;
  path: string;
  status: number;
  /** Placement's error code (microversion >= 1.23), e.g. placement.concurrent_update. */
  code: string | null;
  detail: string;
}

export abstract class PlacementError extends Error {
  abstract readonly transient: boolean;
  constructor(
    message: string,
    readonly answer: PlacementAnswer,
    readonly provider?: ProviderRef,
  ) {
    super(message);
  }
}

const about = (p?: ProviderRef) => (p ? ` for provider ${p.name} (${p.uuid})` : "");

/** No answer, a timeout, or a 5xx: Placement is down or overloaded. Retry later. */
export class PlacementUnavailableError extends PlacementError {
  override name = "PlacementUnavailableError";
  readonly transient = true;
  constructor(url: string, answer: PlacementAnswer, provider?: ProviderRef) {
    super(`Placement at ${url} is unavailable: ${answer.method} ${answer.path}${about(provider)}: ${answer.status || "no answer"} ${answer.detail}`.trim(), answer, provider);
  }
}

/** A 4xx: Placement refused the request. A 409 concurrent_update is retried after a re-read; the others are not. */
export class PlacementRefusedError extends PlacementError {
  override name = "PlacementRefusedError";
  readonly transient = false;
  constructor(answer: PlacementAnswer, provider?: ProviderRef) {
    super(`Placement refused ${answer.method} ${answer.path}${about(provider)}: ${answer.status}${answer.code ? ` ${answer.code}` : ""}: ${answer.detail}`, answer, provider);
  }

  get code(): string | null {
    return this.answer.code;
  }
}

/** The host has no compute-node provider in Placement (PLACEMENT_MISSING_COMPUTE_NODE=wait). */
export class ComputeNodeNotFoundError extends Error {
  override name = "ComputeNodeNotFoundError";
  readonly transient = false;
  constructor(readonly hostname: string) {
    super(
      `no compute-node resource provider named ${hostname} in Placement: waiting for it ` +
        `(start nova-compute on the host, or set PLACEMENT_MISSING_COMPUTE_NODE=create for standalone use)`,
    );
  }
}

export const isConflict = (err: unknown, code: string): err is PlacementRefusedError =>
  err instanceof PlacementRefusedError && err.answer.status === 409 && err.answer.code === code;

/** Placement is down (or too busy): every host must wait, not only this one. */
export const isTransient = (err: unknown): boolean => err instanceof PlacementUnavailableError;
