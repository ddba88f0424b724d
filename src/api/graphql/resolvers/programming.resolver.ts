import { Arg, Authorized, Ctx, ID, Mutation, Resolver, Root, Subscription } from "type-graphql";
import { programDeployable } from "../../program-deployable.js";
import { readAfterWrite } from "../../read-your-writes.js";
import { commandContext, type ApiContext } from "../context.js";
import { ProgrammingRequest, ProgrammingResultAnswer, ProgrammingResultInput } from "../types/bitstream.type.js";
import { Deployable } from "../types/deployable.type.js";
import { checkHostAgent, programmingRequests, requestPayload, requestStream } from "./programming-requests.js";
import { AgentRequest, AgentRequestKind, CleaningResultAnswer, CleaningResultInput } from "../types/device-loop.type.js";
import type { ApiServices } from "../../services.js";
import { PartitionResultAnswer, PartitionResultInput } from "../types/partition-request.type.js";

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

  @Authorized("programming:agent")
  @Mutation(() => CleaningResultAnswer, { description: "A host agent's report of a cleaning request's outcome" })
  async reportCleaningResult(@Ctx() ctx: ApiContext, @Arg("input", () => CleaningResultInput) input: CleaningResultInput) {
    checkHostAgent(ctx, input.hostname);
    const { hostname, deviceUuid, requestId, ok } = input;
    return ctx.services.app.reportCleaningResult(commandContext(ctx), { hostname, deviceUuid, requestId, ok, digest: input.digest, command: input.command, durationMs: input.durationMs, reason: input.reason });
  }

  @Authorized("programming:agent")
  @Mutation(() => PartitionResultAnswer, { description: "A host agent's answer to a partition request; a made partition completes the bind that waited for it" })
  async reportPartitionResult(@Ctx() ctx: ApiContext, @Arg("input", () => PartitionResultInput) input: PartitionResultInput) {
    checkHostAgent(ctx, input.hostname);
    const { hostname, requestId, ok, partition, command, durationMs, reason } = input;
    return ctx.services.app.reportPartitionResult(commandContext(ctx), { hostname, requestId, ok, partition, command, durationMs, reason });
  }

  @Subscription(() => AgentRequest, {
    description:
      "A host agent's requests of every kind (kind PROGRAM: program a region; CLEAN: clean a device; CREATE_PARTITION, DESTROY_PARTITION: " +
      "make a partition a bind waits for, destroy a released one): those in flight when it subscribes, " +
      "then each new one (agent token for its own host, or admin)",
    subscribe: ({ args, context }) => {
      const ctx = context as ApiContext;
      const hostname = (args as { hostname: string }).hostname;
      return requestStream(ctx, hostname, () => agentRequestsInFlight(ctx.services, hostname));
    },
  })
  agentRequests(@Root() payload: AgentRequest, @Arg("hostname", () => String) _hostname: string) {
    return payload;
  }
}

/** The host's requests in flight, programming first, each as an AgentRequest of its kind. */
async function agentRequestsInFlight(services: ApiServices, hostname: string): Promise<AgentRequest[]> {
  const [programs, cleans, parts] = await Promise.all([services.app.programmingInFlight(hostname), services.app.cleaningInFlight(hostname), services.app.partitionRequestsInFlight(hostname)]);
  const none = { program: null, clean: null, partition: null };
  return [
    ...programs.map((r) => ({ ...none, kind: AgentRequestKind.PROGRAM, requestId: r.requestId, hostname, program: requestPayload(r) })),
    ...cleans.map((r) => ({ ...none, kind: AgentRequestKind.CLEAN, requestId: r.requestId, hostname, clean: r })),
    ...parts.map((r) => ({ ...none, kind: r.action === "CREATE" ? AgentRequestKind.CREATE_PARTITION : AgentRequestKind.DESTROY_PARTITION, requestId: r.requestId, hostname, partition: r })),
  ];
}
