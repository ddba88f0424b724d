/**
 * The host's inventory tree as folded from stream `host-<hostname>`, plus which attach handle is
 * allocated to which ARQ. Immutable: evolve copies the path from the root to the changed node.
 * Maps keep insertion order, so handles are offered in the order they were first reported.
 */
import type { InventoryEvent } from "./events.js";
import type { DeployableNode, DeviceNode, HandleNode, HostState } from "./host-tree.js";
import { evolveTree } from "./evolve-tree.js";
import { openBooks } from "./books.js";

export { findDeployable } from "./evolve-tree.js";
export type { Allocation, AttributeNode, DeployableNode, DeviceNode, HandleNode, HostState, ProgrammingClosed, ProgrammingInFlight, ProgrammingReport } from "./host-tree.js";

export const initialHostState = (): HostState => ({
  hostname: null,
  devices: new Map(),
  deviceOfDeployable: new Map(),
  allocations: new Map(),
  programmingFailures: new Map(),
  inventoryChanges: 0,
  settledReport: null,
  firstAt: null,
  books: null,
});

export function evolveHost(state: HostState, event: InventoryEvent): HostState {
  if (event.type === "HostBooksClosed") return openBooks(event.data);
  const next = evolveCounted(state, event);
  return state.firstAt === null ? { ...next, firstAt: event.data.at } : next;
}

function evolveCounted(state: HostState, event: InventoryEvent): HostState {
  if (event.type === "HostReportSettled") {
    const { digest, unchanged } = event.data;
    return { ...state, settledReport: { digest, unchanged, inventoryChanges: state.inventoryChanges } };
  }
  const next = evolveTree(state, event);
  if (!changesInventory(event.type)) return next;
  return { ...next, inventoryChanges: state.inventoryChanges + 1 };
}

/** Whether an event on a host stream changes what a settled report was checked against: all but allocations, releases and the settling itself. */
export function changesInventory(type: string): boolean {
  return type !== "AttachHandleAllocated" && type !== "AttachHandleReleased" && type !== "HostReportSettled";
}

/**
 * The settled report that still stands at the end of a host stream, told from its last events
 * (newest first), without folding the host: the latest HostReportSettled when only allocations
 * and releases follow it. Undefined when something else changed since, when a period starts
 * first, or when these events do not reach back to one: then only the fold can tell.
 */
export function settledAtEnd(newestFirst: ReadonlyArray<{ type: string; data: unknown }>): { digest: string; unchanged: number } | undefined {
  for (const e of newestFirst) {
    if (e.type === "HostReportSettled") {
      const { digest, unchanged } = e.data as { digest: string; unchanged: number };
      return { digest, unchanged };
    }
    if (changesInventory(e.type) || e.type === "HostBooksClosed") return undefined;
  }
  return undefined;
}

/** Every handle of a device that is allocated, with its deployable. */
export function allocatedHandles(device: DeviceNode): Array<{ deployable: DeployableNode; handle: HandleNode }> {
  const out: Array<{ deployable: DeployableNode; handle: HandleNode }> = [];
  for (const deployable of device.deployables.values()) {
    for (const handle of deployable.handles.values()) if (handle.allocatedTo) out.push({ deployable, handle });
  }
  return out;
}
