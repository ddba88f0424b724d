/**
 * Operators' taints on a device, and Cyborg's enable/disable over the maintenance taint: one
 * command on the device's host stream each (domain/inventory/taints.ts decides). The author of a
 * taint is the caller's principal unless the front door names another (Cyborg's REST API).
 */
import type { TaintEffect } from "../domain/inventory/taints.js";
import type { CommandContext, DeviceStatus } from "../domain/shared/types.js";
import { aggregates, type Streams } from "./streams.js";

export interface TaintInput {
  key: string;
  value?: string | null;
  effect: TaintEffect;
  reason: string;
}

export interface UntaintInput {
  key: string;
  /** null: every taint of the key. */
  effect?: TaintEffect | null;
  reason?: string | null;
}

export async function taintDevice(s: Streams, ctx: CommandContext, hostname: string, deviceUuid: string, input: TaintInput): Promise<void> {
  const { key, effect, reason } = input;
  const data = { hostname, deviceUuid, key, value: input.value ?? "", effect, by: ctx.principal, reason, at: ctx.at };
  await s.handle(aggregates.host, hostname, { type: "TaintDevice", data }, ctx);
}

export async function untaintDevice(s: Streams, ctx: CommandContext, hostname: string, deviceUuid: string, input: UntaintInput): Promise<void> {
  const data = { hostname, deviceUuid, key: input.key, effect: input.effect ?? null, by: ctx.principal, reason: input.reason ?? "", at: ctx.at };
  await s.handle(aggregates.host, hostname, { type: "UntaintDevice", data }, ctx);
}

export async function setDeviceStatus(
  s: Streams,
  ctx: CommandContext,
  hostname: string,
  deviceUuid: string,
  status: DeviceStatus,
  as?: { by: string; reason: string },
): Promise<void> {
  const by = as?.by ?? ctx.principal;
  const reason = as?.reason ?? (status === "MAINTAINING" ? "set to MAINTAINING (setDeviceStatus)" : "set to ENABLED (setDeviceStatus)");
  await s.handle(aggregates.host, hostname, { type: "SetDeviceStatus", data: { hostname, deviceUuid, status, by, reason, at: ctx.at } }, ctx);
}
