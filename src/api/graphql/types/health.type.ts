import { Field, Int, ObjectType } from "type-graphql";
import { HealthStatus } from "./scalars.js";
import type { HealthStatus as HealthStatusName } from "../../../domain/inventory/health.js";

@ObjectType("HealthReason", { description: "Why a device's health is what it is" })
export class HealthReason {
  @Field(() => String, { description: "ECC_VOLATILE_UNCORRECTABLE, XID, AER_FATAL, ... (docs/drivers.md, Health)" }) code!: string;
  @Field(() => String) message!: string;
  @Field(() => Int, { nullable: true, description: "What the driver counted (errors, events, pages), where it counts; as of the last recorded change" })
  count?: number | null;
}

@ObjectType("DeviceHealth", { description: "A device's health as its driver last reported a change of it" })
export class DeviceHealth {
  @Field(() => HealthStatus) status!: HealthStatusName;
  @Field(() => [HealthReason]) reasons!: HealthReason[];
}
