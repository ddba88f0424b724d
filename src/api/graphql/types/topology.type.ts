import { Field, Int, ObjectType } from "type-graphql";

@ObjectType("DeviceTopology", { description: "Where a device sits on its host, as its driver last reported it (docs/drivers.md, Topology)" })
export class DeviceTopology {
  @Field(() => Int, { nullable: true, description: "sysfs numa_node; null when the host has no NUMA (numa_node -1)" })
  numaNode!: number | null;
  @Field(() => String, { nullable: true, description: 'The PCIe root port above the device ("0000:00:01.0")' })
  pcieRoot!: string | null;
  @Field(() => String, { nullable: true, description: "The upstream port of the nearest PCIe switch above the device; null when it hangs off the root port" })
  pcieSwitch!: string | null;
  @Field(() => String, { nullable: true, description: 'The host-local peer-link domain (NVLink, xGMI) it belongs to, such as "nvlink:0000:07:00.0"; null without peer links' })
  linkDomain!: string | null;
}
