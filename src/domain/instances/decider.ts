/**
 * Stream `instance-<uuid>`: the ARQs bound to an instance. An instance is bound once: all its ARQs
 * in one bind, as Nova does (cyborg-reference 1.4). ARQs stay listed until they are unbound or
 * deleted, so delete-by-instance sees every one of them without waiting for a read model.
 */
import type { ArqStreamState } from "../arqs/arq.js";
import { liveArq } from "../arqs/decider.js";
import { assertNever, fold, type Decider } from "../shared/decider.js";
import { DomainError } from "../shared/types.js";
import type { InstanceEvent } from "./events.js";
import { operationEffect } from "./operations.js";

export interface InstanceState {
  /** The instance's ARQs, in bind order. */
  arqUuids: readonly string[];
}

export type InstanceCommand =
  /** stale: ARQs the instance lists that no longer belong to it (see isStaleFor); released first. */
  | { type: "BindInstanceArqs"; data: { instanceUuid: string; arqUuids: string[]; stale?: readonly string[]; at: string } }
  | { type: "ReleaseInstanceArqs"; data: { instanceUuid: string; arqUuids: string[]; at: string } }
  | { type: "RecordInstanceOperation"; data: { instanceUuid: string; operation: string; at: string } };

export const initialInstanceState = (): InstanceState => ({ arqUuids: [] });

export function evolveInstance(state: InstanceState, event: InstanceEvent): InstanceState {
  switch (event.type) {
    case "InstanceArqsBound": {
      const known = new Set(state.arqUuids);
      return { arqUuids: [...state.arqUuids, ...event.data.arqUuids.filter((id) => !known.has(id))] };
    }
    case "InstanceArqsReleased": {
      const gone = new Set(event.data.arqUuids);
      return { arqUuids: state.arqUuids.filter((id) => !gone.has(id)) };
    }
    case "InstanceOperationRecorded":
      return state;
    default:
      return assertNever(event);
  }
}

export function decideInstance(command: InstanceCommand, state: InstanceState): InstanceEvent[] {
  const { instanceUuid, at } = command.data;
  if (command.type === "RecordInstanceOperation") {
    const { operation } = command.data;
    if (typeof instanceUuid !== "string" || instanceUuid.trim().length === 0 || instanceUuid.length > 255) {
      throw new DomainError("BAD_USER_INPUT", "an instance uuid of at most 255 characters is needed", "instanceUuid");
    }
    return [{ type: "InstanceOperationRecorded", data: { instanceUuid, operation, effect: operationEffect(operation), at } }];
  }
  const arqUuids = [...new Set(command.data.arqUuids)];
  switch (command.type) {
    case "BindInstanceArqs": {
      if (arqUuids.length === 0) throw new DomainError("BAD_USER_INPUT", "a bind names at least one ARQ", "bindings");
      const released = decideInstance({ type: "ReleaseInstanceArqs", data: { instanceUuid, arqUuids: (command.data.stale ?? []).filter((id) => !arqUuids.includes(id)), at } }, state);
      const listed = fold({ evolve: evolveInstance }, state, released).arqUuids;
      if (listed.length === 0) return [...released, { type: "InstanceArqsBound", data: { instanceUuid, arqUuids, at } }];
      // A retry of the bind that is already recorded changes nothing.
      const bound = new Set(listed);
      if (arqUuids.every((id) => bound.has(id))) return released;
      throw new DomainError(
        "CONFLICT",
        `Instance ${instanceUuid} already has accelerator requests. Cannot bind additional ARQs.`,
        "instanceUuid",
        { instanceUuid, arqUuids: [...listed] },
      );
    }
    case "ReleaseInstanceArqs": {
      const bound = new Set(state.arqUuids);
      const released = arqUuids.filter((id) => bound.has(id));
      return released.length === 0 ? [] : [{ type: "InstanceArqsReleased", data: { instanceUuid, arqUuids: released, at } }];
    }
    default:
      return assertNever(command);
  }
}

/**
 * An ARQ an instance still lists that no longer belongs to it: deleted, or bound to another
 * instance (what a crashed unbind or delete left behind).
 */
export function isStaleFor(instanceUuid: string, arq: ArqStreamState): boolean {
  const live = liveArq(arq);
  return !live || (live.instanceUuid !== null && live.instanceUuid !== instanceUuid);
}

export const instanceDecider: Decider<InstanceCommand, InstanceState, InstanceEvent> = {
  initialState: initialInstanceState,
  evolve: evolveInstance,
  decide: decideInstance,
};
