import { Field, ID, Int, ObjectType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

@ObjectType("MinuteOutcomes", { description: "Binds that ended in one minute" })
export class MinuteOutcomes {
  @Field(() => DateTimeScalar, { description: "The minute's start" }) minute!: string;
  @Field(() => Int, { description: "ARQs that became BOUND" }) bound!: number;
  @Field(() => Int, { description: "ARQs that became BIND_FAILED" }) failed!: number;
}

@ObjectType("BindFailure", { description: "A bind that failed, and why" })
export class BindFailure {
  @Field(() => ID) arqUuid!: string;
  @Field(() => ID, { nullable: true }) instanceUuid!: string | null;
  @Field(() => String, { description: "Why, and what to do about it (the ARQ's bindFailureReason)" }) reason!: string;
  @Field(() => DateTimeScalar) at!: string;
  @Field(() => String, { description: "Its log position" }) position!: string;
}

@ObjectType("BindOutcomes", { description: "How binds ended over the last minutes, read from the event log" })
export class BindOutcomes {
  @Field(() => DateTimeScalar) from!: string;
  @Field(() => DateTimeScalar) to!: string;
  @Field(() => [MinuteOutcomes], { description: "One per minute, oldest first, empty minutes included" }) minutes!: MinuteOutcomes[];
  @Field(() => Int) bound!: number;
  @Field(() => Int) failed!: number;
  @Field(() => [BindFailure], { description: "The window's failures, newest first (at most 20)" }) recentFailures!: BindFailure[];
  @Field(() => Boolean, { description: "The window held more outcomes than one answer reads (50,000): the counts stop at the last one read" })
  truncated!: boolean;
}
