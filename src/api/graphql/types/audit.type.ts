import { Field, ID, Int, ObjectType } from "type-graphql";
import { Connection } from "./connection.js";
import { DateTimeScalar, JSONScalar } from "./scalars.js";

@ObjectType("PointInTime", { description: "The point in the log an answer asked with asOf reflects" })
export class PointInTime {
  @Field(() => String, { description: "Every event up to this log position (decimal string; 0: before the first) and none after" })
  position!: string;
  @Field(() => String, { description: "The asOf asked for: a position or an ISO-8601 time" }) requested!: string;
}

@ObjectType("HistoryEntry", { description: "One event in an object's history or a request's trace: who did what, when and why" })
export class HistoryEntry {
  @Field(() => String, { description: "Log position (decimal string); pass it as `after` for the next page" }) position!: string;
  @Field(() => String) stream!: string;
  @Field(() => Int) revision!: number;
  @Field(() => ID) eventId!: string;
  @Field(() => String) type!: string;
  @Field(() => String, { description: 'What happened, to what, where, by whom: "ARQ … bound to instance … on compute1 (…) by nova (service)"' })
  summary!: string;
  @Field(() => String, { description: "Who acted: a token's name, <roles>:<hash prefix>, or system:<component> (never a token)" }) principal!: string;
  @Field(() => [String], { nullable: true, description: "The principal's roles when it acted" }) roles!: string[] | null;
  @Field(() => String, { nullable: true, description: "When the command was issued (its metadata.at)" }) at!: string | null;
  @Field(() => DateTimeScalar, { description: "When the store recorded it" }) recordedAt!: Date;
  @Field(() => String, { description: "The request it belongs to: pass it to trace" }) correlationId!: string;
  @Field(() => String, { description: "The request or event that directly caused it" }) causationId!: string;
  @Field(() => String, { nullable: true, description: "The project of the request it belongs to (a trace is one project's)" }) project!: string | null;
  @Field(() => String, { nullable: true, description: "The notification the service sent because of it (accelerator-request-bound)" })
  notification!: string | null;
  @Field(() => JSONScalar) data!: unknown;
  @Field(() => String, { nullable: true, description: "Its link in the stream's hash chain (audit verify)" }) hash!: string | null;
}

@ObjectType("HistoryEntryConnection")
export class HistoryEntryConnection extends Connection("HistoryEntry", HistoryEntry) {}
