/**
 * Stream `bitstreams-catalogue`: the embedded bitstream catalogue (uploads and deletions are rare operator
 * actions, so one stream holds them all and its revision keeps ids unique). A bitstream is removed
 * only when nothing uses it: the caller gathers what does (regions running it, requests in
 * flight, profiles naming it) and the rule refuses while the list is not empty.
 */
import { assertNever, type Decider } from "../shared/decider.js";
import { DomainError } from "../shared/types.js";
import type { Bitstream } from "./bitstream.js";
import type { BitstreamEvent } from "./events.js";

export interface CatalogueState {
  /** Live bitstreams by id, in upload order. */
  bitstreams: ReadonlyMap<string, Bitstream>;
  /** Ids that were used once (never given out again). */
  removed: ReadonlySet<string>;
}

export type CatalogueCommand =
  | { type: "AddBitstream"; data: Bitstream }
  | { type: "RemoveBitstream"; data: { id: string; usedBy: readonly string[]; at: string } };

export const initialCatalogueState = (): CatalogueState => ({ bitstreams: new Map(), removed: new Set() });

export function evolveCatalogue(state: CatalogueState, event: BitstreamEvent): CatalogueState {
  switch (event.type) {
    case "BitstreamAdded": {
      const bitstreams = new Map(state.bitstreams);
      bitstreams.set(event.data.id, event.data);
      return { ...state, bitstreams };
    }
    case "BitstreamRemoved": {
      const bitstreams = new Map(state.bitstreams);
      bitstreams.delete(event.data.id);
      return { bitstreams, removed: new Set([...state.removed, event.data.id]) };
    }
    default:
      return assertNever(event);
  }
}

export function decideCatalogue(command: CatalogueCommand, state: CatalogueState): BitstreamEvent[] {
  switch (command.type) {
    case "AddBitstream": {
      const b = command.data;
      if (state.bitstreams.has(b.id) || state.removed.has(b.id)) throw new DomainError("CONFLICT", `bitstream ${b.id} already exists`, "id");
      return [{ type: "BitstreamAdded", data: { ...b } }];
    }
    case "RemoveBitstream": {
      const { id, usedBy, at } = command.data;
      const b = checkRemovable(state.bitstreams.get(id) ?? null, id, usedBy);
      return [{ type: "BitstreamRemoved", data: { id, name: b.name, checksum: b.checksum, at } }];
    }
    default:
      return assertNever(command);
  }
}

/** The rule for removing a bitstream from any catalogue: it exists, and nothing uses it. */
export function checkRemovable(b: Bitstream | null, id: string, usedBy: readonly string[]): Bitstream {
  if (!b) throw new DomainError("NOT_FOUND", `bitstream ${id} not found`, "id");
  if (usedBy.length > 0) {
    throw new DomainError("CONFLICT", `bitstream ${id} (${b.name}) is in use: ${usedBy.join("; ")}`, "id", { usedBy: [...usedBy] });
  }
  return b;
}

export const catalogueDecider: Decider<CatalogueCommand, CatalogueState, BitstreamEvent> = {
  initialState: initialCatalogueState,
  evolve: evolveCatalogue,
  decide: decideCatalogue,
};
