/**
 * What a bind draws from its device's capacities for its group's amounts (shared/amount-keys.ts),
 * decided on the host stream's state with the handle (allocation.ts): the draws are recorded on
 * AttachHandleAllocated and released with it (capacity-record.ts).
 */
import type { AmountNeed } from "../shared/amount-keys.js";
import { DomainError } from "../shared/types.js";
import { capacityFree } from "./capacity.js";
import { capacityProviderOf, capacityStatesOf } from "./capacity-record.js";
import type { CapacityDraw } from "./events.js";
import type { DeployableNode, DeviceNode, HostState } from "./host-tree.js";
import { TARGET_MISMATCH } from "./target-fit.js";

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
