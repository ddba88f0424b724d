import { Field, InputType, Int } from "type-graphql";
import { JSONScalar } from "../types/scalars.js";
import { AttachHandleInput } from "./attach-handle.input.js";

@InputType("SlotPlacementInput", { description: "Slots a partition occupies: [start, start + size)" })
export class SlotPlacementInput {
  @Field(() => Int) start!: number;
  @Field(() => Int) size!: number;
}

@InputType("PartitionCounterInput", { description: "A shared amount partitions draw from (MIG: compute slices)" })
export class PartitionCounterInput {
  @Field(() => String) name!: string;
  @Field(() => Int) total!: number;
}

@InputType("CounterUseInput")
export class CounterUseInput {
  @Field(() => String) counter!: string;
  @Field(() => Int) amount!: number;
}

@InputType("PartitionProfileInput", { description: "A size of partition the device can make (MIG: a GPU-instance profile such as 3g.40gb)" })
export class PartitionProfileInput {
  @Field(() => String, { description: 'The profile\'s name without the vendor\'s prefix: "1g.10gb", "nvidia-223"' }) name!: string;
  @Field(() => String, { description: 'What the tool calls it when asked to make one (MIG profile id "9", mdev type "nvidia-223")' }) toolId!: string;
  @Field(() => String, { description: "The Placement resource class of one partition of this profile (CUSTOM_MIG_3G_40GB)" }) resourceClass!: string;
  @Field(() => [CounterUseInput]) consumes!: CounterUseInput[];
  @Field(() => [SlotPlacementInput], { description: "Where one may start and how many slots it spans; empty on a device without slots" }) placements!: SlotPlacementInput[];
  @Field(() => Int, { nullable: true, description: "At most this many at once (the tool's limit)" }) maxInstances!: number | null;
}

@InputType("DriverPartitionInput", { description: "A partition that exists on the device, as the tool lists it" })
export class DriverPartitionInput {
  @Field(() => String) profile!: string;
  @Field(() => String, { description: 'Its identity: the MIG device UUID ("MIG-..."), the mdev UUID' }) uuid!: string;
  @Field(() => SlotPlacementInput, { nullable: true }) placement!: SlotPlacementInput | null;
  @Field(() => JSONScalar, { nullable: true, description: "What the tool needs to destroy it (MIG: gpu, gpuInstanceId, computeInstanceId)" }) toolRef!: Record<string, string | number>;
  @Field(() => AttachHandleInput, { description: "How a guest attaches it" }) attachHandle!: AttachHandleInput;
}

@InputType("DriverPartitioningInput", { description: "A device cut into partitions on demand (docs/partitions.md)" })
export class DriverPartitioningInput {
  @Field(() => String, { nullable: true, description: "The driver that makes and destroys its partitions (the agent routes requests by it)" }) driverName?: string | null;
  @Field(() => [PartitionCounterInput]) counters!: PartitionCounterInput[];
  @Field(() => Int, { description: "Positions partitions occupy (MIG: 8 memory slices); 0 when placements do not apply" }) slots!: number;
  @Field(() => Boolean, { description: "Only one profile may exist at a time (time-sliced vGPU)" }) oneProfileAtATime!: boolean;
  @Field(() => [PartitionProfileInput]) profiles!: PartitionProfileInput[];
  @Field(() => [DriverPartitionInput]) partitions!: DriverPartitionInput[];
}

@InputType("DriverCapacityInput", { description: "An amount several ARQs draw from (a NIC port's bandwidth shared by its VFs)" })
export class DriverCapacityInput {
  @Field(() => String, { description: 'e.g. "bandwidth"' }) name!: string;
  @Field(() => String, { description: "The Placement resource class that carries it (NET_BW_EGR_KILOBIT_PER_SEC, or CUSTOM_*): the device's provider gets an inventory of it" }) resourceClass!: string;
  @Field(() => Int) total!: number;
  @Field(() => String, { description: 'e.g. "kbit/s"' }) unit!: string;
}
