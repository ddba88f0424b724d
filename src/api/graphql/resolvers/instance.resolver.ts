import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { commandContext, type ApiContext } from "../context.js";
import { HostStatus, InstanceOperationResult } from "../types/instance.type.js";

/** What the compute node's os-acc asks and records: host readiness, and instance operations. */
@Resolver()
export class InstanceResolver {
  @Authorized("host:status")
  @Query(() => HostStatus, { description: "Whether the host's agent has reported its inventory" })
  hostStatus(@Ctx() ctx: ApiContext, @Arg("hostname", () => String) hostname: string) {
    return ctx.services.app.hostStatus(hostname);
  }

  @Authorized("instance:operate")
  @Mutation(() => InstanceOperationResult, {
    description:
      "Records what the compute service did to an instance (pause, shelve, resize, ...) and releases its accelerators when the " +
      "operation calls for it; live-migrate and boot-from-snapshot are refused with UNSUPPORTED_OPERATION",
  })
  async recordInstanceOperation(@Ctx() ctx: ApiContext, @Arg("instanceUuid", () => ID) instanceUuid: string, @Arg("operation", () => String) operation: string) {
    return ctx.services.app.recordInstanceOperation(commandContext(ctx), instanceUuid, operation);
  }
}
