import { Field, InputType, Int } from "type-graphql";
import { DeviceType, HealthStatus, JSONScalar } from "../types/scalars.js";
import { AttachHandleInput } from "./attach-handle.input.js";
import { DriverCapacityInput, DriverPartitioningInput } from "./partitioning.input.js";
import type { HealthStatus as HealthStatusName } from "../../../domain/inventory/health.js";
import type { DeviceType as DeviceTypeName } from "../../../domain/shared/types.js";

@InputType("ControlPathInput", { description: "A PCI control path: type \"PCI\", info {domain,bus,device,function}" })
export class ControlPathInput {
  @Field(() => String) type!: string;
  @Field(() => JSONScalar) info!: Record<string, unknown>;
}

@InputType("AttributeInput")
export class AttributeInput {
  @Field(() => String, { description: "rc, trait0, trait1, ... as Cyborg" }) key!: string;
  @Field(() => String) value!: string;
  @Field(() => String, { nullable: true, description: "The key of the attribute this one is nested under, on the same deployable (not rc or trait*)" })
  parentKey?: string | null;
}

export { AttachHandleInput } from "./attach-handle.input.js";

@InputType("DriverDeployableInput")
export class DriverDeployableInput {
  @Field(() => String) name!: string;
  @Field(() => Int) numAccelerators!: number;
  @Field(() => String, { nullable: true }) driverName?: string | null;
  @Field(() => String, { nullable: true }) parentName?: string | null;
  @Field(() => [AttributeInput]) attributes!: AttributeInput[];
  @Field(() => [AttachHandleInput]) attachHandles!: AttachHandleInput[];
}

@InputType("HealthReasonInput")
export class HealthReasonInput {
  @Field(() => String, { description: "Upper-case letters, digits and _: ECC_VOLATILE_UNCORRECTABLE, XID, AER_FATAL, ..." }) code!: string;
  @Field(() => String, { description: "A sentence a person reads (at most 255 characters); counts go in count" }) message!: string;
  @Field(() => Int, { nullable: true }) count?: number | null;
}

@InputType("DeviceTopologyInput", { description: "Where a device sits on its host, as the driver read it (sysfs, nvidia-smi topo -m); each field null (or left out) when unknown" })
export class DeviceTopologyInput {
  @Field(() => Int, { nullable: true, description: "sysfs numa_node (0 to 1023); null for -1 (no NUMA)" }) numaNode!: number | null;
  @Field(() => String, { nullable: true, description: 'The PCIe root port above the device, a PCI address ("0000:00:01.0")' }) pcieRoot!: string | null;
  @Field(() => String, { nullable: true, description: "The upstream port of the nearest PCIe switch above the device; null when it hangs off the root port" })
  pcieSwitch!: string | null;
  @Field(() => String, { nullable: true, description: 'The peer-link domain (NVLink, xGMI) it belongs to, host-local ("nvlink:0000:07:00.0"); null without peer links' })
  linkDomain!: string | null;
}

@InputType("DeviceHealthInput", { description: "A device's health as the driver read it" })
export class DeviceHealthInput {
  @Field(() => HealthStatus) status!: HealthStatusName;
  @Field(() => [HealthReasonInput]) reasons!: HealthReasonInput[];
}

@InputType("DriverDeviceInput", { description: "A device as a driver reports it (cyborg-reference 5.1)" })
export class DriverDeviceInput {
  @Field(() => DeviceType) type!: DeviceTypeName;
  @Field(() => String) vendor!: string;
  @Field(() => String) model!: string;
  @Field(() => JSONScalar, { nullable: true }) stdBoardInfo?: Record<string, unknown> | null;
  @Field(() => JSONScalar, { nullable: true }) vendorBoardInfo?: Record<string, unknown> | null;
  @Field(() => ControlPathInput, { description: "The device's identity: devices are matched across reports by it" }) controlPath!: ControlPathInput;
  @Field(() => [ControlPathInput], { nullable: true, description: "The device's other control paths (e.g. the other PCI functions of one card), each this device's alone" })
  additionalControlPaths?: ControlPathInput[] | null;
  @Field(() => Boolean, { defaultValue: false }) stub!: boolean;
  @Field(() => DeviceHealthInput, { nullable: true, description: "The device's health; left out, the recorded health stays as it is" })
  health?: DeviceHealthInput | null;
  @Field(() => DeviceTopologyInput, { nullable: true, description: "Where the device sits on its host; left out, the recorded topology stays as it is" })
  topology?: DeviceTopologyInput | null;
  @Field(() => DriverPartitioningInput, {
    nullable: true,
    description: "The partitions the device can make and has made; the service derives one deployable (one Placement provider) per profile from it",
  })
  partitioning?: DriverPartitioningInput | null;
  @Field(() => [DriverCapacityInput], {
    nullable: true,
    description: "Amounts ARQs draw from (a NIC port's bandwidth); left out, the device offers none. Each is an inventory of the device's first provider in Placement",
  })
  capacities?: DriverCapacityInput[] | null;
  @Field(() => [DriverDeployableInput]) deployables!: DriverDeployableInput[];
}
