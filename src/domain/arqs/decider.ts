/**
 * Stream `arq-<uuid>`: one accelerator request's state machine (cyborg-reference 2.2).
 *
 * Choices where Cyborg is loose:
 * - A command whose target equals the current state is a no-op when it asks for the same thing
 *   (a retried bind with the same host/RP/instance, a second failure, a second unbind): no event.
 * - Unbind is allowed from every state, as in Cyborg, but unbinding an INITIAL or UNBOUND ARQ emits
 *   nothing: it holds nothing, and INITIAL and UNBOUND allow the same next steps.
 * - Delete is allowed from every state and records what the ARQ held; deleting a deleted ARQ is a no-op.
 */
import { assertNever, type Decider } from "../shared/decider.js";
import { DomainError, type ArqState } from "../shared/types.js";
import type { Arq, ArqAttachment, ArqStreamState } from "./arq.js";
import type { ArqCreated, ArqEvent } from "./events.js";
import { decideEviction, type EvictionCommand } from "./eviction.js";
import { ARQ_TRANSITIONS, canTransition, type ArqTarget } from "./transitions.js";

export interface BindTarget {
  hostname: string;
  deviceRpUuid: string;
  instanceUuid: string;
}

export type ArqCommand =
  | { type: "CreateArq"; data: ArqCreated["data"] }
  | { type: "StartArqBind"; data: BindTarget & { arqUuid: string; projectId?: string | null; at: string } }
  | {
      type: "CompleteArqBind";
      data: BindTarget & { arqUuid: string; at: string } & ArqAttachment;
    }
  | {
      type: "FailArqBind";
      /** onlyFrom: fail only from these states and emit nothing from any other (a conditional failure). */
      data: { arqUuid: string; reason: string; onlyFrom?: readonly ArqState[]; at: string };
    }
  | { type: "UnbindArq"; data: { arqUuid: string; at: string } }
  | { type: "DeleteArq"; data: { arqUuid: string; at: string } }
  | EvictionCommand;

export const initialArqState = (): ArqStreamState => ({ status: "absent" });

export function evolveArq(state: ArqStreamState, event: ArqEvent): ArqStreamState {
  if (event.type === "ArqCreated") {
    const d = event.data;
    return {
      status: "live",
      arq: {
        uuid: d.arqUuid,
        state: "INITIAL",
        deviceProfileName: d.deviceProfileName,
        deviceProfileUuid: d.deviceProfileUuid,
        deviceProfileGroupId: d.deviceProfileGroupId,
        deviceProfileVersion: d.deviceProfileVersion ?? 1,
        group: d.group,
        projectId: d.projectId,
        hostname: null,
        deviceRpUuid: null,
        instanceUuid: null,
        attachment: null,
        bindFailureReason: null,
        eviction: null,
        createdAt: d.at,
        updatedAt: null,
      },
    };
  }
  if (state.status !== "live") return state;
  const arq = state.arq;
  switch (event.type) {
    case "ArqBindStarted": {
      const { hostname, deviceRpUuid, instanceUuid, projectId, at } = event.data;
      return live({ ...arq, state: "BIND_STARTED", hostname, deviceRpUuid, instanceUuid, projectId, attachment: null, bindFailureReason: null, eviction: null, updatedAt: at });
    }
    case "ArqBound": {
      const d = event.data;
      const attachment: ArqAttachment = { deployableUuid: d.deployableUuid, handleUuid: d.attachHandleUuid, handleType: d.attachHandleType, handleInfo: d.attachHandleInfo };
      if (d.alternative !== undefined) attachment.alternative = d.alternative;
      return live({ ...arq, state: "BOUND", hostname: d.hostname, deviceRpUuid: d.deviceRpUuid, instanceUuid: d.instanceUuid, attachment, updatedAt: d.at });
    }
    case "ArqBindFailed":
      return live({ ...arq, state: "BIND_FAILED", bindFailureReason: event.data.reason, updatedAt: event.data.at });
    case "ArqUnbound":
      return live({ ...arq, state: "UNBOUND", hostname: null, deviceRpUuid: null, instanceUuid: null, attachment: null, eviction: null, updatedAt: event.data.at });
    case "ArqDeleted":
      return { status: "deleted", arq: { ...arq, eviction: null, updatedAt: event.data.at }, deletedAt: event.data.at };
    case "ArqEvictionRequested": {
      const { deviceUuid, taintKey, reason, deadline, at } = event.data;
      return live({ ...arq, eviction: { deviceUuid, taintKey, reason, deadline, requestedAt: at }, updatedAt: at });
    }
    default:
      return assertNever(event);
  }
}

const live = (arq: Arq): ArqStreamState => ({ status: "live", arq });

export function decideArq(command: ArqCommand, state: ArqStreamState): ArqEvent[] {
  if (command.type === "CreateArq") {
    if (state.status !== "absent") throw new DomainError("CONFLICT", `ARQ ${command.data.arqUuid} already exists`, "arqUuid");
    return [{ type: "ArqCreated", data: { ...command.data, group: { ...command.data.group } } }];
  }
  if (state.status === "deleted" && command.type === "DeleteArq") return [];
  // The holder may have left before the notice was decided: nothing to tell.
  if (command.type === "RequestArqEviction") return state.status === "live" ? decideEviction(state.arq, command.data) : [];
  if (state.status !== "live") throw new DomainError("NOT_FOUND", `Accelerator request ${command.data.arqUuid} not found`, "arqUuid");
  const arq = state.arq;
  const at = command.data.at;
  switch (command.type) {
    case "StartArqBind": {
      const target = validateBindTarget(command.data);
      if (sameTarget(arq, target) && (arq.state === "BIND_STARTED" || arq.state === "BOUND")) return [];
      ensureTransition(arq, "BIND_STARTED");
      const projectId = arq.projectId ?? command.data.projectId ?? null;
      return [{ type: "ArqBindStarted", data: { arqUuid: arq.uuid, ...target, projectId, at } }];
    }
    case "CompleteArqBind":
      return decideCompleteBind(arq, command.data, at);
    case "FailArqBind": {
      const { onlyFrom, reason } = command.data;
      if (arq.state === "BIND_FAILED") return [];
      if (onlyFrom && !onlyFrom.includes(arq.state)) return [];
      ensureTransition(arq, "BIND_FAILED");
      return [{ type: "ArqBindFailed", data: { arqUuid: arq.uuid, instanceUuid: arq.instanceUuid, reason, at } }];
    }
    case "UnbindArq":
      return decideUnbind(arq, at);
    case "DeleteArq":
      return decideDelete(arq, at);
    default:
      return assertNever(command);
  }
}

function decideCompleteBind(arq: Arq, d: Extract<ArqCommand, { type: "CompleteArqBind" }>["data"], at: string): ArqEvent[] {
  if (arq.state === "BOUND" && arq.attachment?.handleUuid === d.handleUuid && sameTarget(arq, d)) return [];
  ensureTransition(arq, "BOUND");
  if (!sameTarget(arq, d)) {
    throw new DomainError("CONFLICT", `ARQ ${arq.uuid} is now binding to another host, RP or instance`, "arqUuid");
  }
  return [
    {
      type: "ArqBound",
      data: {
        arqUuid: arq.uuid,
        hostname: d.hostname,
        instanceUuid: d.instanceUuid,
        deviceRpUuid: d.deviceRpUuid,
        deployableUuid: d.deployableUuid,
        attachHandleUuid: d.handleUuid,
        attachHandleType: d.handleType,
        attachHandleInfo: d.handleInfo,
        ...(d.alternative === undefined ? {} : { alternative: d.alternative }),
        at,
      },
    },
  ];
}

function decideUnbind(arq: Arq, at: string): ArqEvent[] {
  if (arq.state === "INITIAL" || arq.state === "UNBOUND") return [];
  return [
    {
      type: "ArqUnbound",
      data: {
        arqUuid: arq.uuid,
        previousHostname: arq.hostname,
        previousInstanceUuid: arq.instanceUuid,
        releasedHandleUuid: arq.attachment?.handleUuid ?? null,
        at,
      },
    },
  ];
}

function decideDelete(arq: Arq, at: string): ArqEvent[] {
  ensureTransition(arq, "DELETING");
  return [
    {
      type: "ArqDeleted",
      data: {
        arqUuid: arq.uuid,
        deviceProfileName: arq.deviceProfileName,
        deviceProfileUuid: arq.deviceProfileUuid,
        previousHostname: arq.hostname,
        previousInstanceUuid: arq.instanceUuid,
        releasedHandleUuid: arq.attachment?.handleUuid ?? null,
        at,
      },
    },
  ];
}

function validateBindTarget(d: BindTarget): BindTarget {
  for (const field of ["hostname", "deviceRpUuid", "instanceUuid"] as const) checkBindField(field, d[field]);
  return { hostname: d.hostname, deviceRpUuid: d.deviceRpUuid, instanceUuid: d.instanceUuid };
}

/** A bind names its ARQ and target with non-empty strings of at most 255 characters (Cyborg: "Fields absent in patch"). */
export function checkBindField(name: string, value: unknown, field = name): string {
  if (typeof value !== "string" || value.trim().length === 0 || value.length > 255) {
    throw new DomainError("BAD_USER_INPUT", `Fields absent in patch: ${name} is required to bind`, field);
  }
  return value;
}

/** The ARQ, unless its stream is absent or deleted. */
export function liveArq(state: ArqStreamState): Arq | null {
  return state.status === "live" ? state.arq : null;
}

function sameTarget(arq: Arq, t: BindTarget): boolean {
  return arq.hostname === t.hostname && arq.deviceRpUuid === t.deviceRpUuid && arq.instanceUuid === t.instanceUuid;
}

/** What the caller can do about a refused transition (the end of its message), or "". */
function fixFor(arq: Arq, to: ArqTarget): string {
  if (arq.state === "DELETING") return " It is being deleted: create a new ARQ.";
  if (to !== "BIND_STARTED") return "";
  const where = arq.instanceUuid ? ` to instance ${arq.instanceUuid}${arq.hostname ? ` on ${arq.hostname}` : ""}` : "";
  switch (arq.state) {
    case "BOUND":
      return ` It is bound${where}: unbind it first (unbindAcceleratorRequests; REST: PATCH with "op": "remove"), then bind it again.`;
    case "BIND_FAILED":
      return ` Its bind${where} failed (${arq.bindFailureReason ?? "see its bindFailureReason"}): unbind it first, then bind it again.`;
    case "BIND_STARTED":
      return ` Its bind${where} is in progress: wait for its accelerator-request-bound event, or unbind it first.`;
    default:
      return "";
  }
}

function ensureTransition(arq: Arq, to: ArqTarget): void {
  if (!canTransition(arq.state, to)) {
    throw new DomainError(
      "CONFLICT",
      `Bad state: ${arq.state} for ARQ: ${arq.uuid}. Expected state(s): ${ARQ_TRANSITIONS[to].join(", ")}.${fixFor(arq, to)}`,
      "arqUuid",
      { arqUuid: arq.uuid, state: arq.state, target: to },
    );
  }
}

export const arqDecider: Decider<ArqCommand, ArqStreamState, ArqEvent> = {
  initialState: initialArqState,
  evolve: evolveArq,
  decide: decideArq,
};
