import { Arg, Authorized, Ctx, ID, Mutation, Resolver, Root, Subscription } from "type-graphql";
import { programDeployable } from "../../program-deployable.js";
import { readAfterWrite } from "../../read-your-writes.js";
import { commandContext, type ApiContext } from "../context.js";
import { ProgrammingRequest, ProgrammingResultAnswer, ProgrammingResultInput } from "../types/bitstream.type.js";
import { Deployable } from "../types/deployable.type.js";
import { checkHostAgent, programmingRequests, requestPayload } from "./programming-requests.js";

@Resolver()
export class ProgrammingResolver {
  @Authorized("deployable:program")
  @Mutation(() => Deployable, {
    description:
      "Asks the host's agent to program the region with a bitstream of the catalogue (refused while it has bound ARQs); " +
      "returns at once with Deployable.programming showing the request, or unchanged when the region already runs it",
  })
  async programDeployable(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string, @Arg("bitstreamId", () => ID) bitstreamId: string) {
    await programDeployable(ctx.services, commandContext(ctx), uuid, bitstreamId);
    return readAfterWrite(() => ctx.loaders.deployable.load(uuid));
  }

  @Authorized("programming:agent")
  @Mutation(() => ProgrammingResultAnswer, { description: "A host agent's report of a programming request's outcome" })
  async reportProgrammingResult(@Ctx() ctx: ApiContext, @Arg("input", () => ProgrammingResultInput) input: ProgrammingResultInput) {
    checkHostAgent(ctx, input.hostname);
    const answer = await ctx.services.app.reportProgrammingResult(commandContext(ctx), {
      hostname: input.hostname,
      deployableUuid: input.deployableUuid,
      requestId: input.requestId,
      ok: input.ok,
      command: input.command ?? null,
      durationMs: input.durationMs ?? null,
      reason: input.reason ?? null,
    });
    return answer;
  }

  @Subscription(() => ProgrammingRequest, {
    description: "A host agent's programming requests: those in flight when it subscribes, then each new one (agent token for its own host, or admin)",
    subscribe: ({ args, context }) => programmingRequests(context as ApiContext, (args as { hostname: string }).hostname),
  })
  programmingRequests(@Root() payload: ReturnType<typeof requestPayload>, @Arg("hostname", () => String) _hostname: string) {
    return payload;
  }
}
