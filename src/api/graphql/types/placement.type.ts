import { Field, ID, Int, ObjectType } from "type-graphql";
import { AcceleratorRequest } from "./accelerator-request.type.js";
import { ProjectQuota } from "./project-quota.type.js";

@ObjectType("PlacementRuledOut", { description: "Why something was ruled out, and what would have to change (docs/scheduling.md, the rules)" })
export class PlacementRuledOut {
  @Field(() => String, { description: "PROFILE_DISABLED, HOST_LIMIT, STALE_AGENT, RESOURCE_CLASS, TRAIT_MISSING, TRAIT_FORBIDDEN, LIFECYCLE, TAINT, NO_FREE_HANDLE, CAPACITY or TOPOLOGY" }) rule!: string;
  @Field(() => String) message!: string;
  @Field(() => String) change!: string;
}

@ObjectType("PlacementProviderVerdict", { description: "One provider judged for one group" })
export class PlacementProviderVerdict {
  @Field(() => ID) rpUuid!: string;
  @Field(() => ID) deviceUuid!: string;
  @Field(() => Int, { description: "The alternative it was judged against (0: the group's own keys)" }) alternative!: number;
  @Field(() => PlacementRuledOut, { nullable: true, description: "Null: it could take the group" }) ruledOut!: PlacementRuledOut | null;
}

@ObjectType("PlacementGroupVerdict")
export class PlacementGroupVerdict {
  @Field(() => Int) group!: number;
  @Field(() => [PlacementProviderVerdict]) providers!: PlacementProviderVerdict[];
}

@ObjectType("PlacementHostVerdict")
export class PlacementHostVerdict {
  @Field(() => String) hostname!: string;
  @Field(() => PlacementRuledOut, { nullable: true, description: "Null: the request fits on this host" }) ruledOut!: PlacementRuledOut | null;
  @Field(() => [PlacementGroupVerdict]) groups!: PlacementGroupVerdict[];
}

@ObjectType("PlacementRuleExample", { description: "One host a rule ruled out, in words" })
export class PlacementRuleExample {
  @Field(() => String) hostname!: string;
  @Field(() => String, { description: "What ruled the host out" }) message!: string;
  @Field(() => String, { description: "What would have to change" }) change!: string;
}

@ObjectType("PlacementRuleCount")
export class PlacementRuleCount {
  @Field(() => String) rule!: string;
  @Field(() => Int) hosts!: number;
  @Field(() => PlacementRuleExample, { description: "The first of those hosts by name, in words" }) example!: PlacementRuleExample;
}

@ObjectType("PlacementExplanation", { description: "Where a request could be placed, and per host and provider why not" })
export class PlacementExplanation {
  @Field(() => Int, { description: "Hosts considered" }) hosts!: number;
  @Field(() => Int, { description: "Hosts where the request fits now" }) fitting!: number;
  @Field(() => [PlacementRuleCount], { description: "Hosts ruled out, per first rule" }) byRule!: PlacementRuleCount[];
  @Field(() => [PlacementHostVerdict], { description: "The hosts closest to fitting first" }) detail!: PlacementHostVerdict[];
  @Field(() => AcceleratorRequest, { nullable: true, description: "With arqUuid: the ARQ explained (its state, and where it is bound, if it is)" }) acceleratorRequest?: AcceleratorRequest | null;
  @Field(() => ProjectQuota, { nullable: true, description: "With arqUuid: its project's quota, limits and usage per resource class" }) quota?: ProjectQuota | null;
}

@ObjectType("HostCapacity")
export class HostCapacity {
  @Field(() => String) hostname!: string;
  @Field(() => Int) count!: number;
}

@ObjectType("PlacementCapacity", { description: "How many more of a request fit now" })
export class PlacementCapacity {
  @Field(() => Int) total!: number;
  @Field(() => [HostCapacity], { description: "Hosts where at least one more fits, most first" }) hosts!: HostCapacity[];
}

@ObjectType("Placement", { description: "ARQs created and bound where the placement engine chose" })
export class Placement {
  @Field(() => String) hostname!: string;
  @Field(() => [Int], { description: "Per group, the alternative it got (0: the group's own keys)" }) alternatives!: number[];
  @Field(() => [AcceleratorRequest]) acceleratorRequests!: AcceleratorRequest[];
}
