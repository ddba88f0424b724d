import { Field, ID, Int, ObjectType } from "type-graphql";

@ObjectType("ProviderCapacity", { description: "A capacity of a provider's device (a NIC port's bandwidth): one more inventory of the provider in Placement" })
export class ProviderCapacity {
  @Field(() => String) resourceClass!: string;
  @Field(() => Int) total!: number;
  @Field(() => Int, { description: "Equal to total while the device takes no new work, as the provider's own" }) reserved!: number;
  @Field(() => Int, { description: "Drawn by the ARQs bound to the provider" }) used!: number;
}

@ObjectType("ResourceProvider", { description: "A deployable as Placement sees it" })
export class ResourceProvider {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "The compute node (host) the provider nests under" }) parentProviderName!: string;
  @Field(() => String) resourceClass!: string;
  @Field(() => Int) total!: number;
  @Field(() => Int, { description: "Equal to total while the device is in maintenance" }) reserved!: number;
  @Field(() => Int) used!: number;
  @Field(() => [String]) traits!: string[];
  @Field(() => [ProviderCapacity], { description: "Its device's capacities (a NIC port's bandwidth), each one more inventory in Placement beside resourceClass; [] for most providers" })
  capacities!: ProviderCapacity[];
}
