import { Field, ID, Int, ObjectType } from "type-graphql";
import { AttachHandleType, JSONScalar } from "./scalars.js";
import { Connection } from "./connection.js";

@ObjectType("Attribute")
export class Attribute {
  @Field(() => ID) uuid!: string;
  @Field(() => String) key!: string;
  @Field(() => String) value!: string;
  @Field(() => ID, { nullable: true, description: "The attribute this one is nested under, on the same deployable (parent_attribute_id); null at the top" })
  parentUuid!: string | null;
}

@ObjectType("AttachHandle", { description: "What a VM attaches: a PCI function, an mdev, or a fake-driver handle" })
export class AttachHandle {
  @Field(() => ID) uuid!: string;
  @Field(() => AttachHandleType) type!: string;
  @Field(() => JSONScalar) info!: Record<string, unknown>;
  @Field(() => Boolean) inUse!: boolean;
  @Field(() => Boolean, { description: "Gone from the host's report while allocated; removed once released" })
  lost!: boolean;
  arqUuid!: string | null;
  deployableUuid!: string;
}

@ObjectType("Deployable", { description: "A schedulable unit of a device: one Placement resource provider" })
export class Deployable {
  @Field(() => ID) uuid!: string;
  @Field(() => String) name!: string;
  @Field(() => Int) numAccelerators!: number;
  @Field(() => String, { nullable: true }) driverName!: string | null;
  @Field(() => ID) rpUuid!: string;
  @Field(() => ID, { nullable: true }) bitstreamId!: string | null;
  @Field(() => String, { nullable: true }) resourceClass!: string | null;
  @Field(() => [String]) traits!: string[];
  @Field(() => [Attribute]) attributes!: Attribute[];
  @Field(() => String) hostname!: string;
  parentUuid!: string | null;
  rootUuid!: string | null;
  deviceUuid!: string;
}

@ObjectType("DeployableConnection")
export class DeployableConnection extends Connection("Deployable", Deployable) {}
