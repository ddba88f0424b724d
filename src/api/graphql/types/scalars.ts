import { GraphQLDateTime, GraphQLJSON } from "graphql-scalars";
import { registerEnumType } from "type-graphql";
import { ARQ_STATES, ATTACH_HANDLE_TYPES, DEVICE_STATUSES, DEVICE_TYPES } from "../../../domain/shared/types.js";

/** The JSON and DateTime scalars of the contract (graphql-scalars). */
export const JSONScalar = GraphQLJSON;
export const DateTimeScalar = GraphQLDateTime;

const asEnum = <T extends string>(values: readonly T[]) => Object.fromEntries(values.map((v) => [v, v])) as { [K in T]: K };

export const DeviceType = asEnum(DEVICE_TYPES);
export const DeviceStatus = asEnum(DEVICE_STATUSES);
export const AttachHandleType = asEnum(ATTACH_HANDLE_TYPES);
export const ArqState = asEnum(ARQ_STATES);
export const BindStatus = asEnum(["COMPLETED", "FAILED"] as const);

registerEnumType(DeviceType, { name: "DeviceType" });
registerEnumType(DeviceStatus, { name: "DeviceStatus" });
registerEnumType(AttachHandleType, { name: "AttachHandleType" });
registerEnumType(ArqState, { name: "ArqState", description: "The ARQ state machine of Cyborg (cyborg-reference 2.2)" });
registerEnumType(BindStatus, { name: "BindStatus" });
