import { Field, ID, Int, ObjectType } from "type-graphql";

@ObjectType("CapacityHolder", { description: "An ARQ drawing from a device's capacity, and how much" })
export class CapacityHolder {
  @Field(() => ID) arqUuid!: string;
  @Field(() => Int) amount!: number;
}

@ObjectType("DeviceCapacity", { description: "An amount several ARQs draw from (a NIC port's bandwidth shared by its VFs), and what they draw" })
export class DeviceCapacity {
  @Field(() => String, { description: 'As the driver names it, e.g. "bandwidth"' }) name!: string;
  @Field(() => String, { description: "Its inventory's class on the device's provider in Placement, and the class a profile asks an amount of" }) resourceClass!: string;
  @Field(() => String, { description: 'e.g. "kbit/s"' }) unit!: string;
  @Field(() => Int) total!: number;
  @Field(() => Int, { description: "Drawn by the ARQs holding the device's attach handles" }) used!: number;
  @Field(() => Int, { description: "total - used: the most one more bind may draw" }) free!: number;
  @Field(() => [CapacityHolder]) holders!: CapacityHolder[];
}
