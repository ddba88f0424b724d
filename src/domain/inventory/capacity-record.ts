/**
 * A device's capacities in the host stream: the amounts its driver reports (DriverDevice.capacities,
 * recorded with DeviceCapacitiesChanged only when they change) and what each ARQ draws from them.
 * Who draws what lives once, in the attach handles' allocations (AttachHandleAllocated.draws), so a
 * draw is released with its handle and the host stream's revision serialises draws as it does
 * handles: concurrent binds never take a capacity past its total (capacity.ts).
 */
import type { AmountNeed } from "../shared/amount-keys.js";
import { canonicalJson } from "../shared/json.js";
import { DomainError } from "../shared/types.js";
import { capacityFree, capacityFromReport, type CapacityState } from "./capacity.js";
import type { CapacityDraw, InventoryEvent } from "./events.js";
import type { DeployableNode, DeviceNode, HostState } from "./host-tree.js";
import { TARGET_MISMATCH } from "./target-fit.js";
import type { DriverCapacity } from "./partitioning-report.js";
import { profileOfDeployable } from "./partition-record.js";

/** DeviceCapacitiesChanged when the reported capacities differ from the recorded ones (in order; none reported is none). */
export function capacitiesEvents(hostname: string, deviceUuid: string, recorded: readonly DriverCapacity[], reported: readonly DriverCapacity[] | undefined, at: string): InventoryEvent[] {
  const next = reported ?? [];
  if (canonicalJson(recorded) === canonicalJson(next)) return [];
  return [{ type: "DeviceCapacitiesChanged", data: { hostname, deviceUuid, capacities: [...next], at } }];
}

/** The device's capacities with what each ARQ holding one of its handles draws from them. */
export function capacityStatesOf(state: Pick<HostState, "allocations">, device: DeviceNode): CapacityState[] {
  if (device.capacities.length === 0) return [];
  const draws = new Map<string, Map<string, number>>();
  for (const a of state.allocations.values()) {
    if (a.deviceUuid !== device.uuid) continue;
    for (const d of a.draws ?? []) {
      const byArq = draws.get(d.resourceClass) ?? new Map<string, number>();
      byArq.set(a.arqUuid, (byArq.get(a.arqUuid) ?? 0) + d.amount);
      draws.set(d.resourceClass, byArq);
    }
  }
  return device.capacities.map((c) => capacityFromReport(c, draws.get(c.resourceClass)));
}

/**
 * The provider that carries the device's capacities in Placement and that binds drawing from them
 * name: the device's first deployable with a resource class, in the order first reported (an
 * SR-IOV NIC's physical function, whose attach handles are its VFs), never a partition profile's.
 * Null when it has none.
 */
export function capacityProviderOf(device: DeviceNode): string | null {
  if (device.capacities.length === 0) return null;
  for (const d of device.deployables.values()) if (d.attributes.has("rc") && !profileOfDeployable(device, d)) return d.uuid;
  return null;
}

/** A provider that cannot serve the group's amounts: refused at once, as any provider that does not fit the group. */
function amountMismatch(deployable: DeployableNode, hostname: string, problem: string, classes: string[]): DomainError {
  return new DomainError("BAD_USER_INPUT", `Resource provider ${deployable.rpUuid} (deployable ${deployable.name} on host ${hostname}) does not fit the ARQ's request group: ${problem}`, "deviceRpUuid", {
    reason: TARGET_MISMATCH,
    deviceRpUuid: deployable.rpUuid,
    resourceClass: null,
    missing: [],
    forbidden: [],
    amounts: classes,
  });
}

/**
 * What a bind to `deployable` draws from its device's capacities for the group's amounts, decided
 * against the host stream's state, so the sum drawn never passes a total across concurrent binds.
 * Refused at once (BAD_USER_INPUT) when the device offers no capacity of an amount's class or the
 * provider is not the one that carries them; CONFLICT, naming the capacity, its free amount and
 * the amount asked, when there is not enough left now.
 */
export function drawsForBind(state: Pick<HostState, "allocations">, device: DeviceNode, deployable: DeployableNode, hostname: string, amounts: readonly AmountNeed[] | undefined): CapacityDraw[] {
  if (!amounts || amounts.length === 0) return [];
  const capacities = capacityStatesOf(state, device);
  const unknown = amounts.filter((a) => !capacities.some((c) => c.resourceClass === a.resourceClass)).map((a) => a.resourceClass);
  if (unknown.length > 0) {
    const offered = capacities.length === 0 ? "it offers no capacity" : `it offers ${capacities.map((c) => c.resourceClass).join(", ")}`;
    throw amountMismatch(deployable, hostname, `its device has no capacity of ${unknown.join(", ")} to draw the group's amount from (${offered})`, unknown);
  }
  const carrier = capacityProviderOf(device);
  if (carrier !== deployable.uuid) {
    const name = carrier === null ? "none of its providers" : `its provider ${device.deployables.get(carrier)?.name ?? carrier}`;
    throw amountMismatch(deployable, hostname, `its device's capacities are drawn with ${name}, not with this one`, amounts.map((a) => a.resourceClass));
  }
  for (const a of amounts) {
    const c = capacities.find((x) => x.resourceClass === a.resourceClass)!;
    const free = capacityFree(c);
    if (a.amount > free) {
      throw new DomainError(
        "CONFLICT",
        `capacity ${c.name} (${c.resourceClass}) of device ${device.uuid} on host ${hostname} has ${free} of ${c.total} ${c.unit} free; the ARQ asks for ${a.amount}: pick another provider, or unbind ARQs that no longer need theirs`,
        "deviceRpUuid",
      );
    }
  }
  return amounts.map((a) => ({ resourceClass: a.resourceClass, amount: a.amount }));
}
