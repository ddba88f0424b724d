import { Field, ID, Int, ObjectType } from "type-graphql";

@ObjectType({ description: "A deployable as Placement sees it" })
export class ResourceProvider {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { description: "The compute node (host) the provider nests under" }) parentProviderName!: string;
  @Field(() => String) resourceClass!: string;
  @Field(() => Int) total!: number;
  @Field(() => Int, { description: "Equal to total while the device is in maintenance" }) reserved!: number;
  @Field(() => Int) used!: number;
  @Field(() => [String]) traits!: string[];
}
