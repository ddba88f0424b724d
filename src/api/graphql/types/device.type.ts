import { Field, ID, ObjectType } from "type-graphql";
import { DateTimeScalar, DeviceStatus, DeviceType, JSONScalar } from "./scalars.js";
import { PointInTime } from "./audit.type.js";
import { Connection } from "./connection.js";
import { DeviceHealth } from "./health.type.js";
import { DeviceTopology } from "./topology.type.js";
import { Taint } from "./taint.type.js";

@ObjectType("ControlPathId")
export class ControlPathId {
  @Field(() => ID) uuid!: string;
  @Field(() => String, { description: 'e.g. "PCI"' }) type!: string;
  @Field(() => JSONScalar, { description: "PCI: {domain,bus,device,function}" }) info!: Record<string, unknown>;
}

@ObjectType("Device", { description: "A physical accelerator on a host, as its driver reported it" })
export class Device {
  @Field(() => ID) uuid!: string;
  @Field(() => DeviceType) type!: string;
  @Field(() => String) vendor!: string;
  @Field(() => String) model!: string;
  @Field(() => String) hostname!: string;
  @Field(() => DeviceStatus, { description: "Cyborg's status: MAINTAINING while the device carries any taint (see taints), ENABLED otherwise" }) status!: string;
  @Field(() => [Taint], { description: "Its taints, in the order they were set" }) taints!: Taint[];
  @Field(() => JSONScalar, { nullable: true }) stdBoardInfo!: unknown;
  @Field(() => JSONScalar, { nullable: true }) vendorBoardInfo!: unknown;
  @Field(() => ControlPathId, { description: "The control path that identifies the device (the first of controlPaths)" }) controlPath!: ControlPathId;
  /** What the read model keeps beside controlPath; controlPaths answers both. */
  additionalControlPaths?: ControlPathId[];
  @Field(() => Boolean, { description: "Gone from the host's report while an attach handle on it is allocated" })
  lost!: boolean;
  @Field(() => DeviceHealth, { description: "As its driver last reported a change of it (OK with no reasons until then)" })
  health!: DeviceHealth;
  @Field(() => DeviceTopology, { nullable: true, description: "Where it sits on its host (NUMA node, PCIe root port and switch, link domain); null until its driver reports it" })
  topology?: DeviceTopology | null;
  @Field(() => DateTimeScalar) createdAt!: Date;
  @Field(() => DateTimeScalar, { nullable: true }) updatedAt!: Date | null;
  @Field(() => PointInTime, { nullable: true, description: "Set when asked with asOf: the point in the log this answer reflects" })
  asOf!: PointInTime | null;
}

@ObjectType("DeviceConnection")
export class DeviceConnection extends Connection("Device", Device) {}
