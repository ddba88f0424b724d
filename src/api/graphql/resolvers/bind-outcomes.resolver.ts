import { Arg, Authorized, Ctx, Int, Query, Resolver } from "type-graphql";
import { bindOutcomes } from "../../../audit/bind-outcomes.js";
import type { ApiContext } from "../context.js";
import { badInput } from "../errors.js";
import { BindOutcomes } from "../types/bind-outcomes.type.js";

const MAX_MINUTES = 24 * 60;

@Resolver(() => BindOutcomes)
export class BindOutcomesResolver {
  @Authorized("audit:read")
  @Query(() => BindOutcomes, { description: "Binds BOUND and BIND_FAILED per minute over the last `minutes` (default 60, at most 1440), and the recent failures with their reasons, from the event log" })
  bindOutcomes(@Ctx() ctx: ApiContext, @Arg("minutes", () => Int, { nullable: true }) minutes?: number) {
    const m = minutes ?? 60;
    if (!Number.isInteger(m) || m < 1 || m > MAX_MINUTES) throw badInput("minutes", `minutes must be from 1 to ${MAX_MINUTES} (a day); got ${m}`);
    return bindOutcomes(ctx.services.store, { minutes: m });
  }
}
