import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { ProgrammingRequest } from "./bitstream.type.js";
import { PartitionRequest } from "./partition-request.type.js";
import { DateTimeScalar, JSONScalar } from "./scalars.js";

@ObjectType("EvictionNotice", { description: "A NoExecute taint on the device an ARQ holds asks it to move by the deadline" })
export class EvictionNotice {
  @Field(() => ID) deviceUuid!: string;
  @Field(() => String, { description: "The NoExecute taint's key" }) taintKey!: string;
  @Field(() => String) reason!: string;
  @Field(() => DateTimeScalar, { description: "When the holder is asked to have released the device (EVICTION_DEADLINE_S after the taint)" }) deadline!: string;
  @Field(() => DateTimeScalar) requestedAt!: string;
}

@ObjectType("DeviceHolder", { description: "An ARQ holding one of the device's attach handles" })
export class DeviceHolder {
  @Field(() => ID) arqUuid!: string;
  @Field(() => ID, { nullable: true, description: "The instance the ARQ serves" }) instanceUuid!: string | null;
  @Field(() => DateTimeScalar, { nullable: true, description: "When it took the handle (null for holders recorded before this was kept)" }) since!: string | null;
  @Field(() => EvictionNotice, { nullable: true, description: "The notice to move it was given, if any" }) eviction!: EvictionNotice | null;
}

@ObjectType("CleaningInFlight", { description: "A clean the host's agent is working on" })
export class CleaningInFlight {
  @Field(() => ID) requestId!: string;
  @Field(() => String) reason!: string;
  @Field(() => DateTimeScalar) requestedAt!: string;
}

@ObjectType("CleaningOutcome", { description: "How a device's last clean ended" })
export class CleaningOutcome {
  @Field(() => ID) requestId!: string;
  @Field(() => String, { description: "cleaned or failed" }) outcome!: string;
  @Field(() => String, { nullable: true, description: "The driver's digest of what the clean did" }) digest!: string | null;
  @Field(() => [String], { nullable: true, description: "The clean step's command line, as run" }) command!: string[] | null;
  @Field(() => Int, { nullable: true }) durationMs!: number | null;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => DateTimeScalar) at!: string;
}

@ObjectType("DeviceFailure")
export class DeviceFailure {
  @Field(() => String) reason!: string;
  @Field(() => DateTimeScalar) at!: string;
}

@ObjectType("DeviceCleaning", { description: "Cleaning before reuse and re-qualification (docs/device-health.md)" })
export class DeviceCleaning {
  @Field(() => Boolean, { description: "An operator requires a clean after every use (setDeviceCleaningRequired)" }) required!: boolean;
  @Field(() => CleaningInFlight, { nullable: true }) inFlight!: CleaningInFlight | null;
  @Field(() => DateTimeScalar, { nullable: true, description: "Cleaned, waiting for a healthy report since then (QUALIFYING)" }) qualifyingSince!: string | null;
  @Field(() => DeviceFailure, { nullable: true, description: "FAILED, and why: a failed clean or health check" }) failure!: DeviceFailure | null;
  @Field(() => CleaningOutcome, { nullable: true }) last!: CleaningOutcome | null;
}

@ObjectType("CleaningResultAnswer")
export class CleaningResultAnswer {
  @Field(() => Boolean, { description: "false for a repeated report" }) recorded!: boolean;
}

export enum AgentRequestKind {
  PROGRAM = "PROGRAM",
  CLEAN = "CLEAN",
  CREATE_PARTITION = "CREATE_PARTITION",
  DESTROY_PARTITION = "DESTROY_PARTITION",
}
registerEnumType(AgentRequestKind, { name: "AgentRequestKind", description: "What a host's agent is asked to do: program a region, clean a device, or make or destroy a partition" });

@ObjectType("CleaningRequest", { description: "A clean the host's agent is to run with its driver's clean step" })
export class CleaningRequest {
  @Field(() => ID) requestId!: string;
  @Field(() => String) hostname!: string;
  @Field(() => ID) deviceUuid!: string;
  @Field(() => String) deviceType!: string;
  @Field(() => String) vendor!: string;
  @Field(() => String) model!: string;
  @Field(() => [String], { description: "The driver names of the device's deployables: the agent's driver that cleans it" }) driverNames!: string[];
  @Field(() => JSONScalar, { description: "The device's control path {type, info}: the PCI function the clean step addresses" }) controlPath!: Record<string, unknown>;
  @Field(() => String) reason!: string;
  @Field(() => DateTimeScalar) requestedAt!: string;
}

@ObjectType("AgentRequest", { description: "One request to a host's agent, of either kind (the field of its kind is set)" })
export class AgentRequest {
  @Field(() => AgentRequestKind) kind!: AgentRequestKind;
  @Field(() => ID) requestId!: string;
  @Field(() => String) hostname!: string;
  @Field(() => ProgrammingRequest, { nullable: true }) program!: unknown;
  @Field(() => CleaningRequest, { nullable: true }) clean!: unknown;
  @Field(() => PartitionRequest, { nullable: true }) partition!: unknown;
}

@InputType("CleaningResultInput")
export class CleaningResultInput {
  @Field(() => String) hostname!: string;
  @Field(() => ID) deviceUuid!: string;
  @Field(() => ID) requestId!: string;
  @Field(() => Boolean, { description: "true: cleaned (digest, command, durationMs); false: failed (reason, with command and durationMs when the step ran)" }) ok!: boolean;
  @Field(() => String, { nullable: true, description: "The driver's digest of what the clean did" }) digest?: string | null;
  @Field(() => [String], { nullable: true, description: "The clean step's command line, as run" }) command?: string[] | null;
  @Field(() => Float, { nullable: true }) durationMs?: number | null;
  @Field(() => String, { nullable: true }) reason?: string | null;
}
