import { Field, ObjectType } from "type-graphql";

@ObjectType("Viewer", { description: "The caller, as its token makes it: what the console shows and which controls it offers" })
export class Viewer {
  @Field(() => String, { description: "What the event metadata records as who acted" }) principal!: string;
  @Field(() => [String]) roles!: string[];
  @Field(() => String, { nullable: true }) projectId!: string | null;
  @Field(() => String, { nullable: true, description: "An agent token's host" }) hostname!: string | null;
  @Field(() => [String], { description: "The policy rules (auth/policy.ts) these roles allow, e.g. device:status" }) allows!: string[];
}
