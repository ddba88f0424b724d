import { Field, ID, InputType } from "type-graphql";
import { ArqState, DeviceStatus, DeviceType } from "../types/scalars.js";

@InputType("DeviceFilter")
export class DeviceFilter {
  @Field(() => DeviceType, { nullable: true }) type?: string;
  @Field(() => String, { nullable: true }) vendor?: string;
  @Field(() => String, { nullable: true }) hostname?: string;
  @Field(() => DeviceStatus, { nullable: true }) status?: string;
}

@InputType("DeployableFilter")
export class DeployableFilter {
  @Field(() => String, { nullable: true }) hostname?: string;
  @Field(() => ID, { nullable: true }) rpUuid?: string;
  @Field(() => ID, { nullable: true }) deviceUuid?: string;
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => ID, { nullable: true, description: "The bitstream the deployable runs" }) bitstreamId?: string;
}

@InputType("ArqFilter")
export class ArqFilter {
  @Field(() => ID, { nullable: true }) instanceUuid?: string;
  @Field(() => ArqState, { nullable: true }) state?: string;
  @Field(() => String, { nullable: true }) hostname?: string;
  @Field(() => String, { nullable: true }) deviceProfileName?: string;
  @Field(() => Boolean, { nullable: true, description: "Only BOUND, BIND_FAILED and DELETING ARQs" })
  resolvedOnly?: boolean;
}
