import { Field, ID, Int, ObjectType } from "type-graphql";
import { SlotPlacement } from "./partition-request.type.js";

@ObjectType("PartitionCounter", { description: "A shared amount partitions draw from (MIG: compute slices), and how much of it they take" })
export class PartitionCounter {
  @Field(() => String) name!: string;
  @Field(() => Int) total!: number;
  @Field(() => Int, { description: "Taken by the partitions that exist and those being made or destroyed" }) used!: number;
}

@ObjectType("PartitionSlots", { description: "Positions partitions occupy (MIG: memory slices)" })
export class PartitionSlots {
  @Field(() => Int) total!: number;
  @Field(() => Int) used!: number;
}

@ObjectType("PartitionProfileView", { description: "A size of partition the device makes, and its room now" })
export class PartitionProfileView {
  @Field(() => String) name!: string;
  @Field(() => String) toolId!: string;
  @Field(() => String, { description: "Its provider's resource class in Placement" }) resourceClass!: string;
  @Field(() => Int, { description: "Partitions of it that exist" }) made!: number;
  @Field(() => Int, { description: "Of those, held by no ARQ" }) free!: number;
  @Field(() => Int, { description: "How many of it the device can hold now (held, free and still makeable): its Placement capacity" }) canHoldNow!: number;
}

@ObjectType("PartitionView", { description: "A partition that exists, or is being made or destroyed" })
export class PartitionView {
  @Field(() => String, { nullable: true, description: "Its identity (MIG device UUID); null while it is being made" }) uuid!: string | null;
  @Field(() => String) profile!: string;
  @Field(() => SlotPlacement, { nullable: true }) placement!: SlotPlacement | null;
  @Field(() => String, { description: "READY, CREATING or DESTROYING" }) status!: string;
  @Field(() => ID, { nullable: true, description: "The ARQ that holds it (or waits for it)" }) arqUuid!: string | null;
}

@ObjectType("DevicePartitioning", { description: "A device cut into partitions on demand (docs/partitions.md): slices used and free, each profile's room, the partitions" })
export class DevicePartitioning {
  @Field(() => String, { nullable: true }) driverName!: string | null;
  @Field(() => [PartitionCounter]) counters!: PartitionCounter[];
  @Field(() => PartitionSlots) slots!: PartitionSlots;
  @Field(() => [PartitionProfileView]) profiles!: PartitionProfileView[];
  @Field(() => [PartitionView]) partitions!: PartitionView[];
}
