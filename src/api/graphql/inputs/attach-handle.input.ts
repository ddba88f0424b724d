import { Field, InputType } from "type-graphql";
import type { AttachHandleType as AttachHandleTypeName } from "../../../domain/shared/types.js";
import { AttachHandleType, JSONScalar } from "../types/scalars.js";

@InputType("AttachHandleInput")
export class AttachHandleInput {
  @Field(() => AttachHandleType) type!: AttachHandleTypeName;
  @Field(() => JSONScalar) info!: Record<string, unknown>;
}
