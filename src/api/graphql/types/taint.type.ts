import { Field, InputType, ObjectType, registerEnumType } from "type-graphql";
import { DEVICE_LIFECYCLE_STATES } from "../../../domain/inventory/device-lifecycle.js";
import { TAINT_EFFECTS } from "../../../domain/shared/tolerations.js";
import { DateTimeScalar } from "./scalars.js";

const asEnum = <T extends string>(values: readonly T[]) => Object.fromEntries(values.map((v) => [v, v])) as { [K in T]: K };

export const TaintEffect = asEnum(TAINT_EFFECTS);
export const DeviceLifecycleState = asEnum(DEVICE_LIFECYCLE_STATES);
registerEnumType(TaintEffect, {
  name: "TaintEffect",
  description: "NoSchedule: no new bind lands on the device. NoExecute: that, and the device's holders are asked to move",
});
registerEnumType(DeviceLifecycleState, {
  name: "DeviceLifecycleState",
  description:
    "Where a device is in the health loop, derived from its taints, holders and cleaning: FAILED > CLEANING > QUALIFYING > DRAINING (NoExecute, held) > DRAINED (NoExecute, free) > TAINTED > AVAILABLE",
});

@ObjectType("Taint", { description: "A taint on a device: no new bind lands there unless the ARQ's group tolerates it (accel:tolerations), and Placement reserves the device" })
export class Taint {
  @Field(() => String, { description: 'e.g. "cyborg.openstack.org/maintenance", "cyborg.openstack.org/health"' }) key!: string;
  @Field(() => String, { description: 'May be ""' }) value!: string;
  @Field(() => TaintEffect) effect!: string;
  @Field(() => String, { description: 'Who set it: a principal, "health:<rule>", or "cyborg-rest" (Cyborg\'s disable)' }) by!: string;
  @Field(() => String) reason!: string;
  @Field(() => DateTimeScalar) at!: Date;
}

@InputType("TaintInput", { description: "A taint to set on a device; one per key and effect, so the same key and effect replaces the one there" })
export class TaintInput {
  @Field(() => String, { description: 'A qualified name: an optional DNS prefix and "/", then 1 to 63 letters, digits, "-", "_" or "."' }) key!: string;
  @Field(() => String, { nullable: true, description: 'Empty or 1 to 63 letters, digits, "-", "_" or "." (default "")' }) value?: string | null;
  @Field(() => TaintEffect) effect!: "NoSchedule" | "NoExecute";
  @Field(() => String, { description: "Why: a sentence whoever reads the device's history understands" }) reason!: string;
}
