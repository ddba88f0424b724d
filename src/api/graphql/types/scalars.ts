import { GraphQLError, GraphQLScalarType } from "graphql";
import { GraphQLDateTime, GraphQLJSON } from "graphql-scalars";
import { registerEnumType } from "type-graphql";
import { ARQ_STATES, ATTACH_HANDLE_TYPES, DEVICE_STATUSES, DEVICE_TYPES } from "../../../domain/shared/types.js";
import { ATTACH_TARGETS } from "../../../domain/device-profiles/attach-target.js";
import { HEALTH_STATUSES } from "../../../domain/inventory/health.js";

/** Deepest JSON a client may send: what a profile group, an attach info or board info needs, with room to spare. */
export const MAX_JSON_DEPTH = 32;

/** The nesting depth of a JSON value, walked without recursion (a hostile value is as deep as a request body allows). */
export function jsonDepth(value: unknown, stopAt = MAX_JSON_DEPTH + 1): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (d + 1 > deepest) deepest = d + 1;
    if (deepest >= stopAt) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, d + 1]);
  }
  return deepest;
}

function shallow<T>(value: T): T {
  if (jsonDepth(value) > MAX_JSON_DEPTH) {
    throw new GraphQLError(`JSON values may be nested at most ${MAX_JSON_DEPTH} levels deep`, { extensions: { code: "BAD_USER_INPUT" } });
  }
  return value;
}

/** The contract's JSON scalar (graphql-scalars), refusing values nested deeper than MAX_JSON_DEPTH. */
export const JSONScalar = new GraphQLScalarType({
  ...GraphQLJSON.toConfig(),
  parseValue: (value) => shallow(GraphQLJSON.parseValue(value)),
  parseLiteral: (ast, variables) => shallow(GraphQLJSON.parseLiteral(ast, variables)),
});
export const DateTimeScalar = GraphQLDateTime;

const asEnum = <T extends string>(values: readonly T[]) => Object.fromEntries(values.map((v) => [v, v])) as { [K in T]: K };

export const DeviceType = asEnum(DEVICE_TYPES);
export const DeviceStatus = asEnum(DEVICE_STATUSES);
export const AttachHandleType = asEnum(ATTACH_HANDLE_TYPES);
export const ArqState = asEnum(ARQ_STATES);
export const BindStatus = asEnum(["COMPLETED", "FAILED"] as const);
export const AttachTarget = asEnum(ATTACH_TARGETS);
export const HealthStatus = asEnum(HEALTH_STATUSES);

registerEnumType(DeviceType, { name: "DeviceType" });
registerEnumType(DeviceStatus, { name: "DeviceStatus" });
registerEnumType(AttachHandleType, { name: "AttachHandleType" });
registerEnumType(ArqState, { name: "ArqState", description: "The ARQ state machine of Cyborg (cyborg-reference 2.2)" });
registerEnumType(BindStatus, { name: "BindStatus" });
registerEnumType(HealthStatus, {
  name: "HealthStatus",
  description: "A device's health as its driver reads it: OK, WARNING, CRITICAL, or UNKNOWN (the driver could not read it; the reasons say why)",
});
registerEnumType(AttachTarget, { name: "AttachTarget", description: "Where a bound accelerator goes (accel:attach_target): VM (pass-through to the instance), host (used by the compute node), none (not attached)" });
