import { EvictionNotice } from "./device-loop.type.js";
import { Field, ID, Int, ObjectType } from "type-graphql";
import { ArqState, AttachHandleType, AttachTarget, BindStatus, DateTimeScalar, JSONScalar } from "./scalars.js";
import { PointInTime } from "./audit.type.js";
import { Connection } from "./connection.js";

@ObjectType("AcceleratorRequest", { description: "An accelerator request (ARQ): one accelerator for one instance" })
export class AcceleratorRequest {
  @Field(() => ID) uuid!: string;
  @Field(() => ArqState) state!: string;
  @Field(() => String) deviceProfileName!: string;
  @Field(() => Int) deviceProfileGroupId!: number;
  @Field(() => Int, { description: "The version of the device profile this ARQ was made from; its group is that version's" })
  deviceProfileVersion!: number;
  @Field(() => JSONScalar, { description: "The profile group it was made from, as that version had it (what its bind uses)" })
  group!: Record<string, string>;
  @Field(() => String, { nullable: true }) hostname!: string | null;
  @Field(() => ID, { nullable: true }) deviceRpUuid!: string | null;
  @Field(() => ID, { nullable: true }) instanceUuid!: string | null;
  @Field(() => String, { nullable: true }) projectId!: string | null;
  @Field(() => AttachHandleType, { nullable: true, description: "Only when BOUND" }) attachHandleType!: string | null;
  @Field(() => ID, { nullable: true, description: "Only when BOUND" }) attachHandleUuid!: string | null;
  @Field(() => JSONScalar, { nullable: true, description: "Only when BOUND" }) attachHandleInfo!: unknown;
  @Field(() => Int, { nullable: true, description: "BOUND with a group that lists accel:alternatives: which way it got (0: its own request, i: the i-th alternative); null otherwise" })
  alternative!: number | null;
  @Field(() => String, { nullable: true, description: "Why the bind failed and what to do about it: set in BIND_FAILED, null otherwise" })
  bindFailureReason!: string | null;
  @Field(() => AttachTarget, { description: "Where the accelerator goes once bound: its group's accel:attach_target (VM when the group gives none)" })
  attachTarget!: string;
  @Field(() => EvictionNotice, { nullable: true, description: "The notice to move: the device it holds carries a NoExecute taint (null while none)" })
  eviction!: EvictionNotice | null;
  @Field(() => Int, { description: "Revision of the arq-<uuid> stream this view reflects" }) revision!: number;
  @Field(() => DateTimeScalar) createdAt!: Date;
  @Field(() => DateTimeScalar, { nullable: true }) updatedAt!: Date | null;
  @Field(() => PointInTime, { nullable: true, description: "Set when asked with asOf: the point in the log this answer reflects" })
  asOf!: PointInTime | null;
}

@ObjectType("AcceleratorRequestConnection")
export class AcceleratorRequestConnection extends Connection("AcceleratorRequest", AcceleratorRequest) {}

@ObjectType("ArqBindEvent", { description: "Nova's accelerator-request-bound external event, one per ARQ per bind" })
export class ArqBindEvent {
  @Field(() => String, { description: 'Always "accelerator-request-bound"' }) name!: string;
  @Field(() => ID, { description: "The instance" }) serverUuid!: string;
  @Field(() => ID, { description: "The ARQ uuid" }) tag!: string;
  @Field(() => BindStatus) status!: string;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => AcceleratorRequest) arq!: AcceleratorRequest;
}

@ObjectType("ArqEvictionEvent", { description: "accelerator-request-evicted: an eviction notice given to an ARQ's holder (docs/device-health.md)" })
export class ArqEvictionEvent {
  @Field(() => ID, { description: "The ARQ uuid" }) arqUuid!: string;
  @Field(() => ID, { nullable: true, description: "The instance the ARQ serves" }) instanceUuid!: string | null;
  @Field(() => EvictionNotice) notice!: EvictionNotice;
  @Field(() => AcceleratorRequest, { description: "The ARQ as the read models show it when the notice is sent" }) arq!: AcceleratorRequest;
}
