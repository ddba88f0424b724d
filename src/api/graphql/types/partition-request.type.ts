import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { DriverPartitionInput } from "../inputs/partitioning.input.js";
import { DateTimeScalar, JSONScalar } from "./scalars.js";

@ObjectType("SlotPlacement", { description: "Slots a partition occupies: [start, start + size)" })
export class SlotPlacement {
  @Field(() => Int) start!: number;
  @Field(() => Int) size!: number;
}

@ObjectType("PartitionProfileRef", { description: "A partition profile, as the agent's partitioner is asked to make it" })
export class PartitionProfileRef {
  @Field(() => String) name!: string;
  @Field(() => String, { description: 'What the tool calls it (MIG profile id "9", mdev type "nvidia-223")' }) toolId!: string;
}

@ObjectType("PartitionRequest", { description: "A partition the host's agent is to make (CREATE: a bind waits for it) or destroy (DESTROY: its ARQ released it)" })
export class PartitionRequest {
  @Field(() => ID) requestId!: string;
  @Field(() => String) hostname!: string;
  @Field(() => ID) deviceUuid!: string;
  @Field(() => String, { description: "CREATE or DESTROY" }) action!: string;
  @Field(() => String, { nullable: true, description: "The driver whose partitioner acts" }) driverName!: string | null;
  @Field(() => JSONScalar, { description: "The device's control path info (its PCI address)" }) controlPath!: Record<string, unknown>;
  @Field(() => PartitionProfileRef, { nullable: true, description: "CREATE: the profile to make" }) profile!: PartitionProfileRef | null;
  @Field(() => SlotPlacement, { nullable: true, description: "CREATE: where it goes; DESTROY: where it is" }) placement!: SlotPlacement | null;
  @Field(() => ID, { nullable: true, description: "CREATE: the ARQ whose bind waits for it" }) arqUuid!: string | null;
  @Field(() => String, { nullable: true, description: "DESTROY: the partition's identity (MIG device UUID, mdev UUID)" }) uuid!: string | null;
  @Field(() => JSONScalar, { nullable: true, description: "DESTROY: what the tool needs to destroy it, as discovery listed it" }) toolRef!: Record<string, unknown> | null;
  @Field(() => DateTimeScalar) requestedAt!: string;
}

@InputType("PartitionResultInput", { description: "The agent's answer to a partition request" })
export class PartitionResultInput {
  @Field(() => String) hostname!: string;
  @Field(() => ID) requestId!: string;
  @Field(() => Boolean, { description: "true: made (partition, command, durationMs) or destroyed (command, durationMs); false: failed (reason)" }) ok!: boolean;
  @Field(() => DriverPartitionInput, { nullable: true, description: "CREATE: the partition made, as discovery would list it" }) partition?: DriverPartitionInput | null;
  @Field(() => [String], { nullable: true, description: "The tool's command line, as run" }) command?: string[] | null;
  @Field(() => Float, { nullable: true }) durationMs?: number | null;
  @Field(() => String, { nullable: true }) reason?: string | null;
}

@ObjectType("PartitionResultAnswer")
export class PartitionResultAnswer {
  @Field(() => Boolean, { description: "false for a repeated answer, or one to a request no longer waited for" }) recorded!: boolean;
}
