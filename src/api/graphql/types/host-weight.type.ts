import { Field, Float, Int, ObjectType } from "type-graphql";

@ObjectType("HostWeight", { description: "A host as the weigher ranks it for a device profile (docs/weigher.md)" })
export class HostWeight {
  @Field(() => String) hostname!: string;
  @Field(() => Float, { description: "0 to 1: 1 for the best host, 0 for one that does not fit; equal hosts weigh the same" }) weight!: number;
  @Field(() => Boolean, { description: "Each group of the profile has a matching provider with room for its amount" }) fits!: boolean;
  @Field(() => Int, { description: "Free handles on providers matching the profile's groups" }) free!: number;
  @Field(() => Int, { description: "Of those, free handles on regions already running the function or bitstream their group needs" }) ready!: number;
  @Field(() => String, { nullable: true, description: "Why the host does not fit; null when it does" }) reason!: string | null;
}
