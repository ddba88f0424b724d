import { Arg, Authorized, Ctx, Extensions, Mutation, Resolver } from "type-graphql";
import { GraphQLError } from "graphql";
import { DomainError } from "../../../domain/shared/types.js";
import { UNAVAILABLE_CODE } from "../../report-admission.js";
import { commandContext, type ApiContext } from "../context.js";
import { badInput, forbidden } from "../errors.js";
import { DriverDeviceInput } from "../inputs/driver-device.input.js";
import { InventoryReport } from "../types/recorded-event.type.js";

const HOSTNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;
const MAX_DEVICES = 1024;

@Resolver()
export class InventoryResolver {
  @Authorized("inventory:report")
  @Mutation(() => InventoryReport, { description: "A host agent's whole report; the server diffs it against the known tree" })
  async reportHostInventory(
    @Ctx() ctx: ApiContext,
    @Arg("hostname", () => String) hostname: string,
    @Arg("devices", () => [DriverDeviceInput]) devices: DriverDeviceInput[],
  ) {
    checkReporter(ctx, hostname);
    if (devices.length > MAX_DEVICES) throw badInput("devices", `at most ${MAX_DEVICES} devices per report`);
    // The input objects are class instances; the domain reads their fields and copies what it keeps.
    const take = () => ctx.services.app.reportHostInventory(commandContext(ctx), hostname, devices);
    const admission = ctx.services.reportAdmission;
    const report = await (admission ? admission.admit(take) : take()).catch((err: unknown) => refused(ctx, hostname, err));
    ctx.services.metrics?.agentReport(report.added || report.updated || report.removed ? "written" : "unchanged");
    return report;
  }

  @Authorized("inventory:report")
  @Mutation(() => InventoryReport, {
    nullable: true,
    description:
      "Before a full report: what reportHostInventory would answer for a report with this digest (InventoryReport.digest), " +
      "when that report would change nothing; null when the server cannot tell, meaning: send the full report. Writes nothing.",
  })
  @Extensions({ writesNothing: true })
  async confirmHostInventory(@Ctx() ctx: ApiContext, @Arg("hostname", () => String) hostname: string, @Arg("digest", () => String) digest: string) {
    checkReporter(ctx, hostname);
    const answer = await ctx.services.app.confirmHostInventory(hostname, digest);
    ctx.services.metrics?.agentReport(answer ? "confirmed" : "not_confirmed");
    return answer;
  }
}

/** An agent token reports its own host only. */
function checkReporter(ctx: ApiContext, hostname: string): void {
  const p = ctx.principal!;
  if (!HOSTNAME.test(hostname)) throw badInput("hostname", `hostname ${JSON.stringify(hostname)} is not a valid host name`);
  if (p.roles.has("agent") && !p.roles.has("admin") && p.hostname !== hostname) {
    throw forbidden(`reporting host ${hostname}: this agent token is for ${p.hostname}`);
  }
}

/**
 * A refused report leaves the host's inventory as it was, and may be an agent reaching for another
 * host's deployables: the operator hears of it, with who sent it and what the domain said.
 */
function refused(ctx: ApiContext, hostname: string, err: unknown): never {
  if (err instanceof GraphQLError && err.extensions.code === UNAVAILABLE_CODE) ctx.services.metrics?.agentReport("busy");
  if (err instanceof DomainError) {
    const { code, field, details, message } = err;
    ctx.services.log?.warn({ principal: ctx.principal?.principal, hostname, code, field, ...details, correlationId: ctx.correlationId, error: message }, "host report refused");
  }
  throw err;
}
