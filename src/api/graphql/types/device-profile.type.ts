import { Field, ID, ObjectType } from "type-graphql";
import { PointInTime } from "./audit.type.js";
import { DateTimeScalar, JSONScalar } from "./scalars.js";

@ObjectType({ description: 'A "flavor for devices": ordered groups of resources, traits and accel: keys' })
export class DeviceProfile {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => [JSONScalar], { description: "Each group the operator's map, keys in their original order" })
  groups!: Record<string, string>[];
  @Field(() => DateTimeScalar) createdAt!: Date;
  @Field(() => DateTimeScalar, { nullable: true }) updatedAt!: Date | null;
  @Field(() => PointInTime, { nullable: true, description: "Set when asked with asOf: the point in the log this answer reflects" })
  asOf!: PointInTime | null;
}
