import { Field, InputType, Int, ObjectType } from "type-graphql";

@ObjectType("QuotaClass", { description: "One resource class of a project's quota (docs/quotas.md)" })
export class QuotaClass {
  @Field(() => String, { description: "A resource class (FPGA, GPU, ...), or ARQS for the ARQ count" }) resourceClass!: string;
  @Field(() => Int, { nullable: true, description: "Most the project's ARQs may claim; null: counted, not limited" }) limit!: number | null;
  @Field(() => Boolean, { description: "The project's own limit (set by an administrator); false: the service's default" }) own!: boolean;
  @Field(() => Int, { description: "What the project's ARQs claim now" }) usage!: number;
}

@ObjectType("ProjectQuota", { description: "A project's quota: its limits per resource class and its usage, from its quota stream" })
export class ProjectQuota {
  @Field(() => String) projectId!: string;
  @Field(() => [QuotaClass]) classes!: QuotaClass[];
  @Field(() => Int, { description: "ARQs holding a claim" }) claims!: number;
}

@InputType("QuotaLimitInput", { description: "A project's limit on one resource class" })
export class QuotaLimitInput {
  @Field(() => String, { description: "A resource class (upper-case letters, digits, underscores), or ARQS for the ARQ count" }) resourceClass!: string;
  @Field(() => Int, { nullable: true, description: "0 to 10,000,000; null: back to the service's default" }) limit!: number | null;
}
