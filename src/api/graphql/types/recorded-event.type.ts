import { Field, ID, Int, ObjectType } from "type-graphql";
import { DateTimeScalar, JSONScalar } from "./scalars.js";
import { Connection } from "./connection.js";

@ObjectType("RecordedEvent", { description: "An event as stored in the log, with who/when/why in its metadata" })
export class RecordedEvent {
  @Field(() => ID, { description: "The event's id (causationId of the events it caused)" }) id!: string;
  @Field(() => String) stream!: string;
  @Field(() => Int) revision!: number;
  @Field(() => String, { description: "Global log position, a decimal string" }) position!: string;
  @Field(() => String) type!: string;
  @Field(() => JSONScalar) data!: unknown;
  @Field(() => JSONScalar) metadata!: unknown;
  @Field(() => DateTimeScalar) recordedAt!: Date;
  @Field(() => String, { nullable: true, description: "Its link in the stream's hash chain; null for events written before the chain" })
  hash!: string | null;
  @Field(() => Int, { nullable: true, description: "The hash chain definition the hash follows (docs/audit.md): 2, or null for version 1" })
  chainVersion!: number | null;
}

@ObjectType("RecordedEventConnection")
export class RecordedEventConnection extends Connection("RecordedEvent", RecordedEvent) {}

@ObjectType("InventoryReport", { description: "What a host report changed, counted in devices" })
export class InventoryReport {
  @Field(() => String) hostname!: string;
  @Field(() => Int) added!: number;
  @Field(() => Int) updated!: number;
  @Field(() => Int) removed!: number;
  @Field(() => Int) unchanged!: number;
  @Field(() => Int, { description: "The host stream's revision after the report" }) revision!: number;
  @Field(() => String, { nullable: true, description: "The report's digest, for confirmHostInventory; null where not known" })
  digest!: string | null;
}
