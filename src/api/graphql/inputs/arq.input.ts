import { Field, ID, InputType, Int } from "type-graphql";
import { JSONScalar } from "../types/scalars.js";

@InputType("ArqBindingInput", { description: "Bind one ARQ to the host, resource provider and instance the scheduler chose" })
export class ArqBindingInput {
  @Field(() => ID) arqUuid!: string;
  @Field(() => String) hostname!: string;
  @Field(() => ID) deviceRpUuid!: string;
  @Field(() => ID) instanceUuid!: string;
}

@InputType("PlugProviderInput", { description: "A resource provider the scheduler chose, on its compute node (createAndBindAcceleratorRequests)" })
export class PlugProviderInput {
  @Field(() => String) hostname!: string;
  @Field(() => ID) deviceRpUuid!: string;
}

@InputType("DeviceProfileInput")
export class DeviceProfileInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [JSONScalar]) groups!: unknown[];
  @Field(() => ID, { nullable: true }) uuid?: string | null;
}

@InputType("DeviceProfileUpdateInput", { description: "A device profile's new version: what is left out stays as it is" })
export class DeviceProfileUpdateInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true, description: "null clears it" }) description?: string | null;
  @Field(() => [JSONScalar], { nullable: true, description: "Validated as at creation" }) groups?: unknown[] | null;
  @Field(() => Int, { nullable: true, description: "Refuse (CONFLICT) unless the profile is at this version" }) expectedVersion?: number | null;
}
