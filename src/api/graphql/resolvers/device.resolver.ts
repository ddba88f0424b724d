import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { devicePartitioningView } from "../../../app/partitions.js";
import { deviceCapacitiesView } from "../../../app/capacities.js";
import { DeviceCapacity } from "../types/device-capacity.type.js";
import { DevicePartitioning } from "../types/device-partitioning.type.js";
import { commandContext, type ApiContext } from "../context.js";
import { apiError } from "../errors.js";
import { DeviceFilter } from "../inputs/filters.input.js";
import { toConnection } from "../types/connection.js";
import { Deployable } from "../types/deployable.type.js";
import { ControlPathId, Device, DeviceConnection } from "../types/device.type.js";
import { DeviceHealth } from "../types/health.type.js";
import { HEALTHY } from "../../../domain/inventory/health.js";
import { DeviceStatus } from "../types/scalars.js";
import { DeviceCleaning, DeviceHolder } from "../types/device-loop.type.js";
import { cleaningView, type DeviceCleaningView } from "../../../../projections/shared/device-views.js";
import { DeviceLifecycleState, TaintEffect, TaintInput } from "../types/taint.type.js";
import { deviceLifecycle, type DeviceLifecycleState as LifecycleState } from "../../../domain/inventory/device-lifecycle.js";
import { deviceHolders, deviceLifecycleState } from "../../device-loop.js";
import { listDevices, type DeviceView } from "../../../../projections/device-tree/queries.js";
import { deployablesOf, isPast } from "../../../audit/past-views.js";
import { readAfterWrite } from "../../read-your-writes.js";
import { afterCursor, pageSize } from "./paging.js";
import { AS_OF, pastOf } from "./past.js";

async function deviceOrNotFound(ctx: ApiContext, uuid: string): Promise<DeviceView> {
  const device = await ctx.loaders.device.load(uuid);
  if (!device) throw apiError("NOT_FOUND", `no device with uuid ${uuid}`);
  return device;
}

function reloaded(ctx: ApiContext, uuid: string) {
  return readAfterWrite(() => {
    ctx.loaders.device.clear(uuid);
    return ctx.loaders.device.load(uuid);
  });
}

@Resolver(() => Device)
export class DeviceResolver {
  @Authorized("hardware:read")
  @Query(() => DeviceConnection)
  async devices(
    @Ctx() ctx: ApiContext,
    @Arg("filter", () => DeviceFilter, { nullable: true }) filter?: DeviceFilter,
    @Arg("first", () => Int, { nullable: true }) first?: number,
    @Arg("after", () => String, { nullable: true }) after?: string,
    @Arg("asOf", () => String, { ...AS_OF, description: `${AS_OF.description} (with filter.hostname)` }) asOf?: string,
  ) {
    const past = pastOf(ctx, asOf);
    if (past) return toConnection(await past.devices({ ...filter }, pageSize(first), afterCursor(after), asOf!));
    return toConnection(await listDevices(ctx.services.readStore, { ...filter }, pageSize(first), afterCursor(after)));
  }

  @Authorized("hardware:read")
  @Query(() => Device, { nullable: true })
  device(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string, @Arg("asOf", () => String, AS_OF) asOf?: string) {
    const past = pastOf(ctx, asOf);
    return past ? past.device(uuid, asOf!) : ctx.loaders.device.load(uuid);
  }

  @Authorized("device:status")
  @Mutation(() => Device, { description: "MAINTAINING reserves the device's capacity; ENABLED frees it" })
  async setDeviceStatus(
    @Ctx() ctx: ApiContext,
    @Arg("uuid", () => ID) uuid: string,
    @Arg("status", () => DeviceStatus) status: "ENABLED" | "MAINTAINING",
  ) {
    const device = await deviceOrNotFound(ctx, uuid);
    await ctx.services.app.setDeviceStatus(commandContext(ctx), device.hostname, uuid, status);
    return reloaded(ctx, uuid);
  }

  @Authorized("device:status")
  @Mutation(() => Device, { description: "Sets a taint on the device (by the caller): no new bind lands there unless tolerated; NoExecute also asks its holders to move. Placement reserves the device while it carries any taint" })
  async taintDevice(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string, @Arg("taint", () => TaintInput) taint: TaintInput) {
    const device = await deviceOrNotFound(ctx, uuid);
    await ctx.services.app.taintDevice(commandContext(ctx), device.hostname, uuid, taint);
    return reloaded(ctx, uuid);
  }

  @Authorized("device:status")
  @Mutation(() => Device, { description: "Removes the device's taint of this key and effect (without effect: every taint of the key); NOT_FOUND when it carries none" })
  async untaintDevice(
    @Ctx() ctx: ApiContext,
    @Arg("uuid", () => ID) uuid: string,
    @Arg("key", () => String) key: string,
    @Arg("effect", () => TaintEffect, { nullable: true }) effect?: "NoSchedule" | "NoExecute" | null,
    @Arg("reason", () => String, { nullable: true }) reason?: string | null,
  ) {
    const device = await deviceOrNotFound(ctx, uuid);
    await ctx.services.app.untaintDevice(commandContext(ctx), device.hostname, uuid, { key, effect, reason });
    return reloaded(ctx, uuid);
  }

  @FieldResolver(() => DeviceLifecycleState, { description: "Where the device is in the health loop (derived from its taints and holders)" })
  async lifecycleState(@Root() device: DeviceView, @Ctx() ctx: ApiContext): Promise<LifecycleState> {
    if (isPast(device)) {
      const node = device.past.host.devices.get(device.uuid);
      if (node) return deviceLifecycle(node);
    }
    return deviceLifecycleState(device, ctx.loaders);
  }

  @FieldResolver(() => [DeviceHolder], { description: "The ARQs holding one of the device's attach handles, since when, and the notice to move each was given" })
  async holders(@Root() device: DeviceView, @Ctx() ctx: ApiContext): Promise<DeviceHolder[]> {
    if (isPast(device)) return [];
    return deviceHolders(device, ctx.loaders);
  }

  @FieldResolver(() => DeviceCleaning, { description: "Cleaning before reuse and re-qualification: the requirement, the clean in flight, the last outcome, a failure" })
  cleaning(@Root() device: DeviceView): DeviceCleaning {
    if (isPast(device)) {
      const node = device.past.host.devices.get(device.uuid);
      if (node) return cleaningOf(cleaningView(node.cleaning));
    }
    return cleaningOf(device);
  }

  @Authorized("device:status")
  @Mutation(() => Device, { description: "Whether the device must be cleaned by its driver's clean step each time its last holder leaves, before it is offered again" })
  async setDeviceCleaningRequired(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string, @Arg("required", () => Boolean) required: boolean) {
    const device = await deviceOrNotFound(ctx, uuid);
    await ctx.services.app.setDeviceCleaningRequired(commandContext(ctx), device.hostname, uuid, required);
    return reloaded(ctx, uuid);
  }

  @Authorized("device:status")
  @Mutation(() => Device, { description: "Asks the host's agent to clean the device now (refused while an ARQ holds it): how a FAILED device is repaired" })
  async cleanDevice(@Ctx() ctx: ApiContext, @Arg("uuid", () => ID) uuid: string, @Arg("reason", () => String, { nullable: true }) reason?: string) {
    const device = await deviceOrNotFound(ctx, uuid);
    await ctx.services.app.requestDeviceCleaning(commandContext(ctx), device.hostname, uuid, reason ?? null);
    return reloaded(ctx, uuid);
  }

  @FieldResolver(() => [ControlPathId], { description: "Every control path of the device (the database-model spec: a device may have several), controlPath first" })
  controlPaths(@Root() device: DeviceView): ControlPathId[] {
    return [device.controlPath, ...(device.additionalControlPaths ?? [])];
  }

  @FieldResolver(() => DevicePartitioning, {
    nullable: true,
    description: "A device cut into partitions on demand (MIG, vGPU types): slices used and free, each profile's room now, its partitions; null for any other device",
  })
  partitioning(@Root() device: DeviceView, @Ctx() ctx: ApiContext) {
    const past = isPast(device) ? device.past.host.devices.get(device.uuid) : undefined;
    if (past) return devicePartitioningView(past);
    return ctx.services.app.devicePartitioning(device.hostname, device.uuid);
  }

  @FieldResolver(() => [DeviceCapacity], { description: "Amounts ARQs draw from (a NIC port's bandwidth): total, used, free and who draws what; [] for a device that reports none" })
  capacities(@Root() device: DeviceView, @Ctx() ctx: ApiContext) {
    if (isPast(device)) {
      const node = device.past.host.devices.get(device.uuid);
      return node ? deviceCapacitiesView(device.past.host, node) : [];
    }
    return ctx.services.app.deviceCapacities(device.hostname, device.uuid);
  }

  @FieldResolver(() => DeviceHealth)
  health(@Root() device: DeviceView): DeviceHealth {
    return device.health ?? HEALTHY;
  }

  @FieldResolver(() => [Deployable])
  deployables(@Root() device: DeviceView, @Ctx() ctx: ApiContext) {
    if (isPast(device)) return deployablesOf(device);
    return ctx.loaders.deployablesOfDevice.load(device.uuid);
  }
}

function cleaningOf(d: Partial<DeviceCleaningView>): DeviceCleaning {
  return { required: d.cleaningRequired ?? false, inFlight: d.cleaningInFlight ?? null, qualifyingSince: d.qualifyingSince ?? null, failure: d.failure ?? null, last: d.lastCleaning ?? null };
}
