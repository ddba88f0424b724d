import { Arg, Authorized, Ctx, ID, InputType, Field, Int, Mutation, Query, Resolver } from "type-graphql";
import { allows, canSeeArq, seesAllProjects } from "../../auth/policy.js";
import { explainArq } from "../../arq-explanation.js";
import { explainPlacement, placeArqs, placementCapacity, type RequestSpec } from "../../scheduling.js";
import { commandContext, type ApiContext } from "../context.js";
import { badInput, forbidden } from "../errors.js";
import { JSONScalar } from "../types/scalars.js";
import { Placement, PlacementCapacity, PlacementExplanation } from "../types/placement.type.js";

@InputType("PlacementWithoutInput", { description: "What a what-if leaves out" })
export class PlacementWithoutInput {
  @Field(() => [String], { nullable: true }) hosts?: string[];
  @Field(() => [ID], { nullable: true, description: "Device uuids" }) devices?: string[];
}

function specOf(deviceProfileName?: string | null, groups?: unknown[] | null): RequestSpec {
  if ((deviceProfileName != null) === (groups != null)) throw badInput("deviceProfileName", "give exactly one of deviceProfileName, groups and arqUuid");
  return groups ? { groups: structuredClone(groups) } : { deviceProfileName: deviceProfileName! };
}

@Resolver()
export class PlacementResolver {
  @Authorized("resource_provider:read")
  @Query(() => PlacementExplanation, {
    description:
      "Per host and provider, the first rule that rules a profile, inline groups or one ARQ's group out, and what would have to change (docs/scheduling.md). " +
      "Give exactly one of deviceProfileName, groups and arqUuid; an ARQ's explanation also carries the ARQ and its project's quota",
  })
  explainPlacement(
    @Ctx() ctx: ApiContext,
    @Arg("deviceProfileName", () => String, { nullable: true }) deviceProfileName?: string,
    @Arg("groups", () => [JSONScalar], { nullable: true }) groups?: unknown[],
    @Arg("hosts", () => [String], { nullable: true, description: "Only these hosts (at most 1000; not with arqUuid)" }) hosts?: string[],
    @Arg("detail", () => Int, { nullable: true, description: "Hosts given in detail (default 20, at most 200)" }) detail?: number,
    @Arg("arqUuid", () => ID, { nullable: true, description: "One ARQ: its group (with its alternatives) over the fleet, and why it is not bound where it is not" }) arqUuid?: string,
  ) {
    if (arqUuid != null) {
      if (deviceProfileName != null || groups != null) throw badInput("arqUuid", "give exactly one of deviceProfileName, groups and arqUuid");
      if (hosts != null) throw badInput("hosts", "an ARQ's explanation covers every host: leave hosts out");
      return explainArq(ctx.services.app, ctx.services.readStore, arqUuid, (projectId) => canSeeArq(ctx.principal!, projectId), detail ?? 20);
    }
    const stale = (h: string) => ctx.services.app.agentUnavailable(h) !== null;
    return explainPlacement(ctx.services.readStore, stale, specOf(deviceProfileName, groups), { hosts: hosts ?? null }, detail ?? 20);
  }

  @Authorized("resource_provider:read")
  @Query(() => PlacementCapacity, { description: "How many more of a profile fit now, per host and in total; `without`: the same with hosts or devices left out" })
  placementCapacity(
    @Ctx() ctx: ApiContext,
    @Arg("deviceProfileName", () => String) deviceProfileName: string,
    @Arg("without", () => PlacementWithoutInput, { nullable: true }) without?: PlacementWithoutInput,
  ) {
    const stale = (h: string) => ctx.services.app.agentUnavailable(h) !== null;
    return placementCapacity(ctx.services.readStore, stale, { deviceProfileName }, { hosts: without?.hosts ?? [], devices: without?.devices ?? [] });
  }

  // Binding is the compute service's step (arq:bind), as for createAndBindAcceleratorRequests.
  @Authorized("arq:bind")
  @Mutation(() => Placement, {
    description:
      "Creates the ARQs of a profile (or inline groups) and binds them where the placement engine chose, in one step: as " +
      "createAndBindAcceleratorRequests on the engine's providers; a bind that loses a race is tried on the next choice (at most 8 tries). " +
      "No host: CONFLICT, with the explanation's short form in extensions.details.explanation",
  })
  async placeAcceleratorRequests(
    @Ctx() ctx: ApiContext,
    @Arg("instanceUuid", () => ID) instanceUuid: string,
    @Arg("deviceProfileName", () => String, { nullable: true }) deviceProfileName?: string,
    @Arg("groups", () => [JSONScalar], { nullable: true, description: "Inline groups instead of a profile (needs arq:create_inline)" }) groups?: unknown[],
    @Arg("hosts", () => [String], { nullable: true, description: "Only these hosts (at most 1000)" }) hosts?: string[],
    @Arg("instanceHost", () => String, { nullable: true, description: "The instance's host: only there" }) instanceHost?: string,
    @Arg("projectId", () => String, { nullable: true, description: "Admin and service only: the project to create for" }) projectId?: string,
  ) {
    const p = ctx.principal!;
    // Binding is the compute service's; it creates too (each rule is checked, should the policy change).
    if (!allows(p, "arq:create")) throw forbidden("Mutation.placeAcceleratorRequests (needs arq:create)");
    if (groups && !allows(p, "arq:create_inline")) throw forbidden("Mutation.placeAcceleratorRequests with inline groups (needs arq:create_inline)");
    const spec = specOf(deviceProfileName, groups);
    const cmd = commandContext(ctx);
    if (projectId) {
      if (!seesAllProjects(p)) throw forbidden("setting projectId (admin or service only)");
      cmd.projectId = projectId;
    }
    const placed = await placeArqs(ctx.services.app, ctx.services.readStore, cmd, spec, {
      instanceUuid,
      limits: { hosts: hosts ?? null, instanceHost: instanceHost ?? null },
      allocate: ctx.services.bindInline,
      catchUp: () => ctx.services.catchUp(),
    });
    return { hostname: placed.hostname, alternatives: placed.alternatives, acceleratorRequests: placed.arqs };
  }
}
