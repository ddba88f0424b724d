import { Field, ID, Int, ObjectType } from "type-graphql";
import { PointInTime } from "./audit.type.js";
import { DateTimeScalar, JSONScalar } from "./scalars.js";

@ObjectType("DeviceProfile", { description: 'A "flavor for devices": ordered groups of resources, traits and accel: keys' })
export class DeviceProfile {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => [JSONScalar], { description: "Each group the operator's map, keys in their original order (this version's)" })
  groups!: Record<string, string>[];
  @Field(() => DateTimeScalar) createdAt!: Date;
  @Field(() => DateTimeScalar, { nullable: true, description: "When the profile last changed (new version, enabled or disabled, renamed)" })
  updatedAt!: Date | null;
  @Field(() => Int, { description: "1 at creation, one more at each update or migration; asked with a version, that version" })
  version!: number;
  @Field(() => Boolean, { description: "A disabled profile refuses new accelerator requests (PROFILE_DISABLED)" })
  enabled!: boolean;
  @Field(() => Boolean, { description: "Made for inline accelerator specs (os-acc): never listed, deleted with its last ARQ" })
  inline!: boolean;
  @Field(() => PointInTime, { nullable: true, description: "Set when asked with asOf: the point in the log this answer reflects" })
  asOf!: PointInTime | null;
}

@ObjectType("DeviceProfileVersion", { description: "One version of a device profile, as it was made" })
export class DeviceProfileVersion {
  @Field(() => Int) version!: number;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => [JSONScalar]) groups!: Record<string, string>[];
  @Field(() => DateTimeScalar, { description: "When this version was made (the creation, for version 1)" }) createdAt!: Date;
  @Field(() => JSONScalar, { nullable: true, description: "The renamings ({traits, resourceClasses}) that made this version, when a migration did" })
  migration!: unknown;
}

@ObjectType("DeviceProfileKeyChange", { description: "One key of one group that a migration renames" })
export class DeviceProfileKeyChange {
  @Field(() => Int) groupIndex!: number;
  @Field(() => String) from!: string;
  @Field(() => String) to!: string;
}

@ObjectType("DeviceProfileMigration", { description: "What a migration did, or on a dry run would do, to one profile" })
export class DeviceProfileMigration {
  @Field(() => String) name!: string;
  @Field(() => ID) uuid!: string;
  @Field(() => Int) fromVersion!: number;
  @Field(() => Int, { nullable: true, description: "The version the migration made; null on a dry run" }) toVersion!: number | null;
  @Field(() => [DeviceProfileKeyChange]) changes!: DeviceProfileKeyChange[];
}
