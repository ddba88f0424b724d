/**
 * FPGA region programming, on the host stream (the host owns its regions). A region (a deployable)
 * runs a known bitstream (`bitstreamId`) or an unknown one (null), and has at most one request in
 * flight; the handles allocated on it while a request is in flight belong to the binds waiting
 * for it. The rules:
 * - a region already running what a bind needs is not programmed (AFaaS pre-programmed): by
 *   bitstream id, its bitstreamId; by bitstream name, the chosen bitstream's id; by function (id,
 *   or name through the chosen bitstream's function id), its bitstreamId or a function trait the host reports;
 * - a bind needing another bitstream holds its handle and requests the programming; binds needing
 *   the bitstream in flight join the request; a bind needing a different one is refused, as is one
 *   needing a different bitstream than what the region's bound ARQs run (the two never both succeed);
 * - programmed: the region runs the bitstream, its function trait says so, the waiting binds complete;
 * - failed after the driver ran, or abandoned (no answer within BIND_TIMEOUT_S): the region's
 *   bitstream is unknown and its function traits are dropped until the host reports again; the
 *   waiting binds fail with the reason, and a late success is recorded without reviving them.
 */
import type { Bitstream } from "../bitstreams/bitstream.js";
import { fitsRegion, nameMatches } from "../bitstreams/bitstream.js";
import { DomainError } from "../shared/types.js";
import type { InventoryEvent, ProgrammingBitstream, ProgrammingRequester } from "./events.js";
import { attributeUuidFor } from "./ids.js";
import { findDeployable, type DeployableNode, type HostState } from "./state.js";
import { functionIdTrait, isFunctionTrait, isFunctionTraitFor, isRegionTrait } from "../shared/traits.js";

/**
 * What a bind's profile group asks of its region, with the catalogue's answer (app/arqs/bitstream-need.ts):
 * a bitstream by id (accel:bitstream_id) or by name (accel:bitstream_name), or a function by id
 * (accel:function_id) or by name (accel:function_name).
 */
export type BitstreamNeed =
  | { by: "id"; bitstreamId: string; bitstream: Bitstream | null; problem: string | null }
  | { by: "name"; bitstreamName: string; bitstream: Bitstream | null; problem: string | null }
  | { by: "function"; functionId: string; bitstream: Bitstream | null; problem: string | null }
  | { by: "functionName"; functionName: string; bitstream: Bitstream | null; problem: string | null };

/** The function a need asks for, by id: its own, or that of the bitstream chosen for its function name. */
function neededFunctionId(need: BitstreamNeed): string | null {
  if (need.by === "function") return need.functionId;
  if (need.by === "functionName") return need.bitstream?.functionId ?? null;
  return null;
}

export type RegionVerdict =
  | { kind: "complete" }
  /** Hold the handle and wait: `events` requests the programming, or is empty (joins the request in flight). */
  | { kind: "wait"; events: InventoryEvent[] }
  /** The bind cannot have this region: fail it with the reason. */
  | { kind: "refuse"; reason: string };

export interface RequestFor {
  requestId: string;
  requestedBy: ProgrammingRequester;
  at: string;
}

export type ProgrammingCommand =
  | { type: "RequestRegionProgramming"; data: { hostname: string; deployableUuid: string; requestId: string; bitstream: ProgrammingBitstream; principal: string; at: string } }
  | { type: "ReportRegionProgrammed"; data: { hostname: string; deployableUuid: string; requestId: string; command: unknown; durationMs: unknown; at: string } }
  | {
      type: "ReportRegionProgrammingFailed";
      data: { hostname: string; deployableUuid: string; requestId: string; reason: unknown; command: unknown; durationMs: unknown; at: string };
    }
  | { type: "AbandonRegionProgramming"; data: { hostname: string; deployableUuid: string; requestId: string; reason: string; at: string } };

/** The bind's verdict on its region, the handle already allocated to `arqUuid` in `host`. */
export function regionForBind(host: HostState, deployableUuid: string, arqUuid: string, need: BitstreamNeed | null, request: RequestFor): RegionVerdict {
  const region = findDeployable(host, deployableUuid)!.deployable;
  const inFlight = region.programming;
  if (need === null) {
    if (!inFlight) return { kind: "complete" };
    return { kind: "refuse", reason: `deployable ${region.name} is being programmed with bitstream ${inFlight.bitstream.id} (request ${inFlight.requestId})` };
  }
  if (inFlight) {
    const fn = neededFunctionId(need);
    const joins = need.bitstream?.id === inFlight.bitstream.id || (fn !== null && inFlight.bitstream.functionId === fn);
    if (joins) return { kind: "wait", events: [] };
    return {
      kind: "refuse",
      reason: `deployable ${region.name} is being programmed with bitstream ${inFlight.bitstream.id} (request ${inFlight.requestId}); this bind needs ${describe(need)}`,
    };
  }
  if (runs(region, need)) return { kind: "complete" };
  if (!need.bitstream) return { kind: "refuse", reason: need.problem ?? `no bitstream for ${describe(need)}` };
  const others = [...host.allocations.values()].filter((a) => a.deployableUuid === deployableUuid && a.arqUuid !== arqUuid).map((a) => a.arqUuid);
  if (others.length > 0) {
    return {
      kind: "refuse",
      reason: `deployable ${region.name} runs ${region.bitstreamId ? `bitstream ${region.bitstreamId}` : "another bitstream"} for ARQ ${others.join(", ")}; it cannot be reprogrammed with bitstream ${need.bitstream.id} while in use`,
    };
  }
  return { kind: "wait", events: [requested(host.hostname!, region, programmingBitstream(need.bitstream), request)] };
}

/** The one bitstream of `candidates` (those declaring the function) built for the region; none or several is a problem. */
export function chooseForFunction(functionId: string, candidates: readonly Bitstream[], region: DeployableNode | null): BitstreamNeed {
  const chosen = chooseFitting(`function ${functionId}`, candidates.filter((b) => b.functionId === functionId), region, false);
  return { by: "function", functionId, ...chosen };
}

/** As chooseForFunction, for accel:function_name: the one bitstream declaring the function name built for the region. */
export function chooseForFunctionName(functionName: string, candidates: readonly Bitstream[], region: DeployableNode | null): BitstreamNeed {
  const chosen = chooseFitting(`function name ${functionName}`, candidates.filter((b) => b.functionName === functionName), region, false);
  return { by: "functionName", functionName, ...chosen };
}

/**
 * For accel:bitstream_name: the bitstream of that name (with or without its type suffix). One of
 * that name is taken as a bitstream id is (the operator named it); of several, the one built for
 * the region.
 */
export function chooseByName(bitstreamName: string, candidates: readonly Bitstream[], region: DeployableNode | null): BitstreamNeed {
  const chosen = chooseFitting(`bitstream name ${bitstreamName}`, candidates.filter((b) => nameMatches(b.name, bitstreamName)), region, true);
  return { by: "name", bitstreamName, ...chosen };
}

function chooseFitting(what: string, candidates: readonly Bitstream[], region: DeployableNode | null, oneNeedsNoFit: boolean): { bitstream: Bitstream | null; problem: string | null } {
  if (!region) return { bitstream: null, problem: `no deployable to look up ${what} for` };
  if (oneNeedsNoFit && candidates.length === 1) return { bitstream: candidates[0]!, problem: null };
  const traits = regionTraits(region);
  const types = traits.filter(isRegionTrait);
  const fitting = candidates.filter((b) => fitsRegion(b, traits));
  if (fitting.length === 1) return { bitstream: fitting[0]!, problem: null };
  const where = `the region type of deployable ${region.name} (${types.length ? types.join(", ") : "it reports no region trait"})`;
  if (fitting.length === 0) return { bitstream: null, problem: `no bitstream in the catalogue provides ${what} for ${where}` };
  return { bitstream: null, problem: `several bitstreams provide ${what} for ${where}: ${fitting.map((b) => b.id).join(", ")}; name one with accel:bitstream_id` };
}

/** The region's trait values, in attribute order. */
export function regionTraits(region: DeployableNode): string[] {
  return [...region.attributes].filter(([k]) => k.startsWith("trait")).map(([, a]) => a.value);
}

/** Whether the region already does what the bind needs. */
function runs(region: DeployableNode, need: BitstreamNeed): boolean {
  if (need.by === "id") return region.bitstreamId === need.bitstreamId;
  if (region.bitstreamId !== null && need.bitstream?.id === region.bitstreamId) return true;
  const fn = neededFunctionId(need);
  return fn !== null && reportsFunction(region, fn);
}

/** The host reports the function on the region (its driver's CUSTOM_FPGA_<VENDOR>_FUNCTION_<ID> trait). */
export function reportsFunction(region: DeployableNode, functionId: string): boolean {
  const traits = regionTraits(region);
  if (region.driverName !== null) {
    try {
      return traits.includes(functionIdTrait(region.driverName, functionId));
    } catch {
      return false;
    }
  }
  return traits.some((t) => isFunctionTraitFor(t, functionId));
}

function describe(need: BitstreamNeed): string {
  const chosen = need.bitstream ? ` (bitstream ${need.bitstream.id})` : "";
  switch (need.by) {
    case "id":
      return `bitstream ${need.bitstreamId}`;
    case "name":
      return `bitstream name ${need.bitstreamName}${chosen}`;
    case "function":
      return `function ${need.functionId}${chosen}`;
    case "functionName":
      return `function name ${need.functionName}${chosen}`;
  }
}

function requested(hostname: string, region: DeployableNode, bitstream: ProgrammingBitstream, r: RequestFor): InventoryEvent {
  return {
    type: "RegionProgrammingRequested",
    data: {
      hostname,
      deployableUuid: region.uuid,
      requestId: r.requestId,
      bitstream,
      requestedBy: r.requestedBy,
      previousBitstreamId: region.bitstreamId,
      at: r.at,
    },
  };
}

export function programmingBitstream(b: Bitstream): ProgrammingBitstream {
  return { id: b.id, name: b.name, checksum: b.checksum, size: b.size, functionId: b.functionId };
}

/** The operator's request, the agent's reports and the binder's abandonment. */
export function decideProgramming(command: ProgrammingCommand, state: HostState): InventoryEvent[] {
  const { hostname, deployableUuid, at } = command.data;
  const found = findDeployable(state, deployableUuid);
  if (!found && command.type === "AbandonRegionProgramming") return [];
  if (!found) throw new DomainError("NOT_FOUND", `Deployable ${deployableUuid} not found on host ${hostname}`, "deployableUuid");
  const { device, deployable: region } = found;
  const requestId = command.data.requestId;
  switch (command.type) {
    case "RequestRegionProgramming": {
      const b = command.data.bitstream;
      if (device.lostArqs) throw new DomainError("CONFLICT", `Device ${device.uuid} of deployable ${region.name} is lost (no longer reported)`, "uuid");
      const users = [...state.allocations.values()].filter((a) => a.deployableUuid === deployableUuid).map((a) => a.arqUuid);
      if (users.length > 0) throw new DomainError("CONFLICT", `deployable ${region.name} has bound ARQs (${users.join(", ")}); unbind them first`, "uuid");
      if (region.programming) {
        if (region.programming.bitstream.id === b.id) return [];
        throw new DomainError("CONFLICT", `deployable ${region.name} is being programmed with bitstream ${region.programming.bitstream.id} (request ${region.programming.requestId})`, "uuid");
      }
      if (region.bitstreamId === b.id) return [];
      return [requested(hostname, region, b, { requestId, requestedBy: { kind: "operator", principal: command.data.principal }, at })];
    }
    case "ReportRegionProgrammed": {
      const cmd = commandLine(command.data.command);
      const durationMs = duration(command.data.durationMs, false)!;
      const { bitstream, late } = reported(region, requestId, "programmed");
      if (!bitstream) return [];
      const waiting = late ? [] : waitingBinds(state, deployableUuid);
      const events: InventoryEvent[] = [
        { type: "RegionProgrammed", data: { hostname, deployableUuid, requestId, bitstream, command: cmd, durationMs, arqUuids: waiting, late, at } },
      ];
      if (region.bitstreamId !== bitstream.id) events.push({ type: "DeployableChanged", data: { hostname, deployableUuid, changes: { bitstreamId: bitstream.id }, at } });
      return [...events, ...functionTraits(hostname, region, bitstream.functionId, at)];
    }
    case "ReportRegionProgrammingFailed": {
      const reason = text(command.data.reason, "reason");
      const cmd = command.data.command === null || command.data.command === undefined ? null : commandLine(command.data.command);
      const durationMs = duration(command.data.durationMs, true);
      const { bitstream, late } = reported(region, requestId, "failed");
      if (!bitstream) return [];
      const waiting = late ? [] : waitingBinds(state, deployableUuid);
      const failed: InventoryEvent = {
        type: "RegionProgrammingFailed",
        data: { hostname, deployableUuid, requestId, bitstreamId: bitstream.id, reason, command: cmd, durationMs, arqUuids: waiting, late, at },
      };
      return cmd === null ? [failed] : [failed, ...forget(hostname, region, at)];
    }
    case "AbandonRegionProgramming": {
      const inFlight = region.programming;
      if (inFlight?.requestId !== requestId) return [];
      const { reason } = command.data;
      const arqUuids = waitingBinds(state, deployableUuid);
      return [
        { type: "RegionProgrammingAbandoned", data: { hostname, deployableUuid, requestId, bitstreamId: inFlight.bitstream.id, reason, arqUuids, at } },
        ...forget(hostname, region, at),
      ];
    }
  }
}

/**
 * Which request a report is about: the one in flight, or the last one if it was abandoned (a late
 * report). A repeated report of the same outcome is nothing new (no bitstream); anything else is refused.
 */
function reported(region: DeployableNode, requestId: string, outcome: "programmed" | "failed"): { bitstream: ProgrammingBitstream | null; late: boolean } {
  if (region.programming?.requestId === requestId) return { bitstream: region.programming.bitstream, late: false };
  const last = region.lastProgramming;
  if (last?.requestId === requestId) {
    if (last.outcome === "abandoned") return { bitstream: last.bitstream, late: true };
    if (last.outcome === outcome) return { bitstream: null, late: false };
    throw new DomainError("CONFLICT", `request ${requestId} on deployable ${region.name} was already reported ${last.outcome}`, "requestId");
  }
  throw new DomainError("NOT_FOUND", `no programming request ${requestId} on deployable ${region.name}`, "requestId");
}

/** The ARQs holding handles on the region: while a request is in flight, the binds waiting for it. */
function waitingBinds(state: HostState, deployableUuid: string): string[] {
  return [...state.allocations.values()].filter((a) => a.deployableUuid === deployableUuid).map((a) => a.arqUuid);
}

/** The region's bitstream becomes unknown: no bitstreamId, no function trait until the host reports one. */
function forget(hostname: string, region: DeployableNode, at: string): InventoryEvent[] {
  const events: InventoryEvent[] = [];
  if (region.bitstreamId !== null) events.push({ type: "DeployableChanged", data: { hostname, deployableUuid: region.uuid, changes: { bitstreamId: null }, at } });
  return [...events, ...functionTraits(hostname, region, null, at)];
}

/**
 * The region's function trait set to `functionId` (or dropped, for null), as ordinary `trait*`
 * attributes so that Placement sync and the resource-providers model see them: an attribute that
 * holds a function trait keeps its key; with none, the next `traitN` key, the one a driver that
 * lists its function trait last reports (fake, intel), so its next report changes nothing.
 */
export function functionTraits(hostname: string, region: DeployableNode, functionId: string | null, at: string): InventoryEvent[] {
  const held = [...region.attributes].filter(([k, a]) => k.startsWith("trait") && isFunctionTrait(a.value));
  const deployableUuid = region.uuid;
  if (functionId === null) {
    return held.map(([key, a]) => ({ type: "AttributeRemoved" as const, data: { hostname, deployableUuid, attributeUuid: a.uuid, key, at } }));
  }
  const value = functionIdTrait(region.driverName ?? "", functionId);
  const set = (key: string): InventoryEvent => ({ type: "AttributeSet", data: { hostname, deployableUuid, attributeUuid: attributeUuidFor(deployableUuid, key), key, value, at } });
  if (held.length > 0) return held.filter(([, a]) => a.value !== value).map(([key]) => set(key));
  const numbers = [...region.attributes.keys()].map((k) => /^trait(\d+)$/.exec(k)).filter((m) => m !== null).map((m) => Number(m[1]));
  return [set(`trait${numbers.length ? Math.max(...numbers) + 1 : 0}`)];
}

function commandLine(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 64 || !value.every((v) => typeof v === "string" && v.length <= 4096)) {
    throw new DomainError("BAD_USER_INPUT", "command must be the driver's command line: 1 to 64 strings", "command");
  }
  return [...value];
}

function duration(value: unknown, nullable: boolean): number | null {
  if (nullable && (value === null || value === undefined)) return null;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new DomainError("BAD_USER_INPUT", "durationMs must be a number >= 0", "durationMs");
  return Math.round(value);
}

function text(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim().length === 0) throw new DomainError("BAD_USER_INPUT", `${field} must be a non-empty string`, field);
  return value.length > 2000 ? `${value.slice(0, 1997)}...` : value;
}
