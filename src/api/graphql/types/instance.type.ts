import { Field, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

export enum AgentLiveness {
  LIVE = "LIVE",
  STALE = "STALE",
  GONE = "GONE",
}
registerEnumType(AgentLiveness, {
  name: "AgentLiveness",
  description: "LIVE: the host's agent reports on time; STALE: it missed AGENT_STALE_AFTER_PERIODS reports (or none since the service started); GONE: AGENT_GONE_AFTER_PERIODS",
});

@ObjectType("InstanceOperationResult", { description: "An instance operation as recorded, and what it did to the instance's accelerators" })
export class InstanceOperationResult {
  @Field(() => String) operation!: string;
  @Field(() => String, { description: "keep, release, move (released here; plug on the new host) or plug (plug again)" }) effect!: string;
  @Field(() => [ID], { description: "The ARQs it released (deleted)" }) released!: string[];
}

@ObjectType("HostStatus", { description: "Whether a host's agent has reported its inventory (what os-acc's initialize waits for)" })
export class HostStatus {
  @Field(() => String) hostname!: string;
  @Field(() => Boolean) reported!: boolean;
  @Field(() => Int) devices!: number;
  @Field(() => Int, { description: "Regions whose programming the host's agent is working on" }) programmingInProgress!: number;
  @Field(() => Int, { description: "The host stream's revision, -1 if it does not exist" }) revision!: number;
  @Field(() => AgentLiveness, { description: "Whether the host's agent reports on time (every AGENT_REPORT_INTERVAL_S)" }) liveness!: AgentLiveness;
  @Field(() => DateTimeScalar, { nullable: true, description: "The agent's last report (full or confirmed); null when none since the service started" })
  lastReportAt!: Date | null;
  @Field(() => Int, { description: "Seconds since that report (or since the service started, when none)" }) silentForS!: number;
  @Field(() => Boolean, {
    nullable: true,
    description: "Whether Placement has the host's providers and traits as the log has them; null where this process does not run the Placement sync",
  })
  placementSynced!: boolean | null;
  @Field(() => String, { nullable: true, description: "Why the host is not ready for os-acc (stale agent, programming, Placement behind); null when ready" })
  notReadyReason!: string | null;
}
