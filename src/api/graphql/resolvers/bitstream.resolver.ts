import { Readable } from "node:stream";
import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { bitstreamUsage } from "../../bitstream-usage.js";
import { commandContext, type ApiContext } from "../context.js";
import { badInput } from "../errors.js";
import { Bitstream, BitstreamInput } from "../types/bitstream.type.js";

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

@Resolver(() => Bitstream)
export class BitstreamResolver {
  @Authorized("bitstream:read")
  @Query(() => [Bitstream], { description: "The bitstream catalogue (embedded, or Glance's images with accel: properties)" })
  bitstreams(@Ctx() ctx: ApiContext) {
    return ctx.services.app.catalogue.list();
  }

  @Authorized("bitstream:read")
  @Query(() => Bitstream, { nullable: true })
  bitstream(@Ctx() ctx: ApiContext, @Arg("id", () => ID) id: string) {
    return ctx.services.app.catalogue.get(id);
  }

  @Authorized("bitstream:write")
  @Mutation(() => Bitstream, { description: "Adds a bitstream to the catalogue (content in base64, within MAX_BODY_BYTES; POST /bitstreams streams large files)" })
  async uploadBitstream(@Ctx() ctx: ApiContext, @Arg("input", () => BitstreamInput) input: BitstreamInput) {
    const { contentBase64, ...meta } = input;
    if (typeof contentBase64 !== "string" || !BASE64.test(contentBase64)) throw badInput("input.contentBase64", "contentBase64 must be base64");
    return ctx.services.app.uploadBitstream(commandContext(ctx), { ...meta }, Readable.from([Buffer.from(contentBase64, "base64")]));
  }

  @Authorized("bitstream:write")
  @Mutation(() => ID, { description: "Removes a bitstream; refused (CONFLICT) while a region runs it or is being programmed with it, or a profile names it" })
  async deleteBitstream(@Ctx() ctx: ApiContext, @Arg("id", () => ID) id: string) {
    const usedBy = await bitstreamUsage(ctx.services.readStore, id);
    await ctx.services.app.deleteBitstream(commandContext(ctx), id, usedBy);
    return id;
  }
}
