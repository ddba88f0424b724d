import { Field, ID, Int, ObjectType } from "type-graphql";

@ObjectType({ description: "An instance operation as recorded, and what it did to the instance's accelerators" })
export class InstanceOperationResult {
  @Field(() => String) operation!: string;
  @Field(() => String, { description: "keep, release, move (released here; plug on the new host) or plug (plug again)" }) effect!: string;
  @Field(() => [ID], { description: "The ARQs it released (deleted)" }) released!: string[];
}

@ObjectType({ description: "Whether a host's agent has reported its inventory (what os-acc's initialize waits for)" })
export class HostStatus {
  @Field(() => String) hostname!: string;
  @Field(() => Boolean) reported!: boolean;
  @Field(() => Int) devices!: number;
  @Field(() => Int, { description: "Regions whose programming the host's agent is working on" }) programmingInProgress!: number;
  @Field(() => Int, { description: "The host stream's revision, -1 if it does not exist" }) revision!: number;
}
