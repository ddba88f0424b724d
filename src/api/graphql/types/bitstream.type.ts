import { Field, Float, ID, InputType, ObjectType } from "type-graphql";
import { DateTimeScalar, JSONScalar } from "./scalars.js";

@ObjectType("Bitstream", { description: "An FPGA bitstream of the catalogue (embedded, or Glance when GLANCE_URL is set)" })
export class Bitstream {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true, description: "What a profile's accel:function_id names" }) functionId!: string | null;
  @Field(() => String, { nullable: true }) functionName!: string | null;
  @Field(() => String, { nullable: true, description: "The region type it is built for (Intel: the PR interface id)" }) regionType!: string | null;
  @Field(() => String, { nullable: true }) vendor!: string | null;
  @Field(() => String, { description: "<algorithm>:<hex> of the content; the agent checks every download against it" }) checksum!: string;
  @Field(() => Float, { description: "Bytes" }) size!: number;
  @Field(() => DateTimeScalar) createdAt!: string;
}

@InputType("BitstreamInput", { description: "A bitstream's metadata and content (base64; the HTTP route POST /bitstreams takes large files)" })
export class BitstreamInput {
  @Field(() => String) name!: string;
  @Field(() => String, { nullable: true }) functionId?: string | null;
  @Field(() => String, { nullable: true }) functionName?: string | null;
  @Field(() => String, { nullable: true }) regionType?: string | null;
  @Field(() => String, { nullable: true }) vendor?: string | null;
  @Field(() => String) contentBase64!: string;
}

@ObjectType("RegionProgramming", { description: "A region's programming request in flight" })
export class RegionProgramming {
  @Field(() => ID) requestId!: string;
  @Field(() => ID) bitstreamId!: string;
  @Field(() => String) bitstreamName!: string;
  @Field(() => String) checksum!: string;
  @Field(() => String, { nullable: true }) functionId!: string | null;
  @Field(() => JSONScalar, { description: '{kind: "bind", arqUuid, instanceUuid} or {kind: "operator", principal}' })
  requestedBy!: Record<string, unknown>;
  @Field(() => DateTimeScalar) requestedAt!: string;
}

@ObjectType("RegionProgrammingOutcome", { description: "How a region's last programming request ended" })
export class RegionProgrammingOutcome {
  @Field(() => ID) requestId!: string;
  @Field(() => ID) bitstreamId!: string;
  @Field(() => String, { description: "PROGRAMMED, FAILED or ABANDONED (no result within BIND_TIMEOUT_S)" }) outcome!: string;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => [String], { nullable: true, description: "The driver's command line, as run" }) command!: string[] | null;
  @Field(() => Float, { nullable: true }) durationMs!: number | null;
  @Field(() => Boolean, { description: "Reported after the request was abandoned" }) late!: boolean;
  @Field(() => DateTimeScalar) at!: string;
}

@ObjectType("ProgrammingRequest", { description: "What a host's agent is asked to program (programmingRequests)" })
export class ProgrammingRequest {
  @Field(() => ID) requestId!: string;
  @Field(() => String) hostname!: string;
  @Field(() => ID) deployableUuid!: string;
  @Field(() => String) deployableName!: string;
  @Field(() => String, { nullable: true, description: "The deployable's driver (intel, XILINX, fake): the agent's driver that programs it" })
  driverName!: string | null;
  @Field(() => JSONScalar, { description: "The device's control path {type, info}: the PCI function the program command addresses" })
  controlPath!: Record<string, unknown>;
  @Field(() => ID) bitstreamId!: string;
  @Field(() => String) bitstreamName!: string;
  @Field(() => String) checksum!: string;
  @Field(() => Float) size!: number;
  @Field(() => String, { nullable: true }) functionId!: string | null;
  @Field(() => String, { description: "Where the agent downloads the content on this service (GET, bearer token)" }) downloadPath!: string;
  @Field(() => JSONScalar) requestedBy!: Record<string, unknown>;
  @Field(() => DateTimeScalar) requestedAt!: string;
}

@InputType("ProgrammingResultInput", { description: "An agent's report of a programming request's outcome" })
export class ProgrammingResultInput {
  @Field(() => String) hostname!: string;
  @Field(() => ID) deployableUuid!: string;
  @Field(() => ID) requestId!: string;
  @Field(() => Boolean, { description: "true: programmed; false: failed (reason)" }) ok!: boolean;
  @Field(() => [String], { nullable: true, description: "The driver's command line as run; null when it never ran (download or checksum failed)" })
  command?: string[] | null;
  @Field(() => Float, { nullable: true }) durationMs?: number | null;
  @Field(() => String, { nullable: true }) reason?: string | null;
}

@ObjectType("ProgrammingResultAnswer")
export class ProgrammingResultAnswer {
  @Field(() => Boolean, { description: "false for a report already recorded" }) recorded!: boolean;
  @Field(() => Boolean, { description: "The request had been abandoned: recorded, the binds that waited stay failed" }) late!: boolean;
}
