/** The ARQs one creation makes from a profile's groups: one per unit each group asks for, in group order. */
import { groupArqCount, groupIndexes } from "../device-profiles/arq-counts.js";
import type { ProfileGroup } from "../device-profiles/events.js";
import { DomainError } from "../shared/types.js";

export interface PlannedArq {
  arqUuid: string;
  groupId: number;
  /** A copy of the group. */
  group: ProfileGroup;
}

/** One ARQ per unit, in group order; `arqUuids` are the pre-generated ids (arqCountFor of them). */
export function planArqs(groups: readonly ProfileGroup[], groupIndex: number | null | undefined, arqUuids: readonly string[]): PlannedArq[] {
  const planned: PlannedArq[] = [];
  for (const i of groupIndexes(groups, groupIndex)) {
    for (let n = groupArqCount(groups[i]!); n > 0; n--) {
      const arqUuid = arqUuids[planned.length];
      if (arqUuid === undefined) throw new DomainError("BAD_USER_INPUT", "not enough ARQ uuids for the profile", "arqUuids");
      planned.push({ arqUuid, groupId: i, group: { ...groups[i]! } });
    }
  }
  if (planned.length !== arqUuids.length) throw new DomainError("BAD_USER_INPUT", "too many ARQ uuids for the profile", "arqUuids");
  return planned;
}
