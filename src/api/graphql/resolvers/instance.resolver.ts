import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { commandContext, type ApiContext } from "../context.js";
import { badInput } from "../errors.js";
import { HostStatus, InstanceOperationResult } from "../types/instance.type.js";
import { hostStatusesOf } from "./host-status.js";

/** Hosts one hostStatuses call may name (one stream read each). */
const MAX_HOSTS = 500;

/** What the compute node's os-acc asks and records: host readiness, and instance operations. */
@Resolver()
export class InstanceResolver {
  @Authorized("host:status")
  @Query(() => HostStatus, { description: "Whether the host's agent has reported its inventory, reports on time, and Placement has its traits" })
  async hostStatus(@Ctx() ctx: ApiContext, @Arg("hostname", () => String) hostname: string) {
    return (await hostStatusesOf(ctx.services, [hostname]))[0]!;
  }

  @Authorized("host:status")
  @Query(() => [HostStatus], { description: "hostStatus of each host named (at most 500), in the order given" })
  hostStatuses(@Ctx() ctx: ApiContext, @Arg("hostnames", () => [String]) hostnames: string[]) {
    if (hostnames.length > MAX_HOSTS) throw badInput("hostnames", `at most ${MAX_HOSTS} hosts per call, got ${hostnames.length}`);
    return hostStatusesOf(ctx.services, hostnames);
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
