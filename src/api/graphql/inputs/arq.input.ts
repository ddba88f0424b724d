import { Field, ID, InputType } from "type-graphql";
import { JSONScalar } from "../types/scalars.js";

@InputType({ description: "Bind one ARQ to the host, resource provider and instance the scheduler chose" })
export class ArqBindingInput {
  @Field(() => ID) arqUuid!: string;
  @Field(() => String) hostname!: string;
  @Field(() => ID) deviceRpUuid!: string;
  @Field(() => ID) instanceUuid!: string;
}

@InputType({ description: "A resource provider the scheduler chose, on its compute node (createAndBindAcceleratorRequests)" })
export class PlugProviderInput {
  @Field(() => String) hostname!: string;
  @Field(() => ID) deviceRpUuid!: string;
}

@InputType()
export class DeviceProfileInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [JSONScalar]) groups!: unknown[];
  @Field(() => ID, { nullable: true }) uuid?: string | null;
}
