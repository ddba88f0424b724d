/**
 * Stream `quota-<project id>`: a project's limits per resource class and the claims against them.
 * Each ARQ the project creates claims its amounts here (with the stream's exact revision, so that
 * concurrent creations are serialised by the log); deleting the ARQ releases its claim.
 */

/** Amounts per resource class (e.g. {"FPGA": 1, "ARQS": 1}). */
export type Amounts = Readonly<Record<string, number>>;

export interface QuotaLimitsSet {
  type: "QuotaLimitsSet";
  /** The project's own limits per class (those not named follow the service's defaults); null: a class's limit removed. */
  data: { projectId: string; limits: Readonly<Record<string, number | null>>; at: string };
}

export interface QuotaClaimed {
  type: "QuotaClaimed";
  data: { projectId: string; claims: ReadonlyArray<{ arqUuid: string; amounts: Amounts }>; at: string };
}

export interface QuotaReleased {
  type: "QuotaReleased";
  data: { projectId: string; arqUuids: readonly string[]; at: string };
}

/**
 * The stream's first event when the project had ARQs before its quota stream held claims: their
 * claims, read from the read side once, not checked against the limits (they exist already).
 */
export interface QuotaBackfilled {
  type: "QuotaBackfilled";
  data: { projectId: string; claims: ReadonlyArray<{ arqUuid: string; amounts: Amounts }>; at: string };
}

export type QuotaEvent = QuotaLimitsSet | QuotaClaimed | QuotaReleased | QuotaBackfilled;
