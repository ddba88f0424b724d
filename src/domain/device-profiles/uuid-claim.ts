/**
 * Stream `deviceProfileUuid-<uuid>`: which profile name holds a uuid (uuid uniqueness across
 * profiles). The handler decides whether a claim held by another name is stale (its profile is not
 * live with this uuid) and says so with `staleHolder`; a creation then confirms its claim by
 * appending DeviceProfileUuidClaimed again, which bumps the stream's revision so that a takeover
 * decided on an older read fails with a revision conflict.
 */
import { assertNever, type Decider } from "../shared/decider.js";
import { DomainError } from "../shared/types.js";
import type { DeviceProfileUuidEvent } from "./events.js";

export interface UuidClaimState {
  holder: string | null;
}

export type UuidClaimCommand =
  | { type: "ClaimDeviceProfileUuid"; data: { uuid: string; name: string; staleHolder?: string | null } }
  | { type: "ConfirmDeviceProfileUuid"; data: { uuid: string; name: string } }
  | { type: "ReleaseDeviceProfileUuid"; data: { uuid: string; name: string } }
  /** A rename: the claim follows the profile from `name` to `newName`. */
  | { type: "TransferDeviceProfileUuid"; data: { uuid: string; name: string; newName: string } };

export const initialUuidClaimState = (): UuidClaimState => ({ holder: null });

export function evolveUuidClaim(state: UuidClaimState, event: DeviceProfileUuidEvent): UuidClaimState {
  switch (event.type) {
    case "DeviceProfileUuidClaimed":
      return { holder: event.data.name };
    case "DeviceProfileUuidReleased":
      return state.holder === event.data.name ? { holder: null } : state;
    default:
      return assertNever(event);
  }
}

export function decideUuidClaim(command: UuidClaimCommand, state: UuidClaimState): DeviceProfileUuidEvent[] {
  const { uuid, name } = command.data;
  switch (command.type) {
    case "ClaimDeviceProfileUuid": {
      if (state.holder === null) return [{ type: "DeviceProfileUuidClaimed", data: { uuid, name } }];
      if (state.holder === name) return [];
      if (state.holder === command.data.staleHolder) {
        return [
          { type: "DeviceProfileUuidReleased", data: { uuid, name: state.holder } },
          { type: "DeviceProfileUuidClaimed", data: { uuid, name } },
        ];
      }
      throw taken(uuid, state.holder);
    }
    case "ConfirmDeviceProfileUuid":
      if (state.holder !== name) throw taken(uuid, state.holder);
      return [{ type: "DeviceProfileUuidClaimed", data: { uuid, name } }];
    case "TransferDeviceProfileUuid":
      if (state.holder === command.data.newName) return [];
      if (state.holder !== name) throw taken(uuid, state.holder);
      return [{ type: "DeviceProfileUuidClaimed", data: { uuid, name: command.data.newName } }];
    case "ReleaseDeviceProfileUuid":
      return state.holder === name ? [{ type: "DeviceProfileUuidReleased", data: { uuid, name } }] : [];
    default:
      return assertNever(command);
  }
}

function taken(uuid: string, holder: string | null): DomainError {
  return new DomainError(
    "CONFLICT",
    holder === null
      ? `The claim on device profile uuid ${uuid} was released meanwhile.`
      : `A device profile with uuid ${uuid} already exists (${holder}).`,
    "uuid",
  );
}

export const uuidClaimDecider: Decider<UuidClaimCommand, UuidClaimState, DeviceProfileUuidEvent> = {
  initialState: initialUuidClaimState,
  evolve: evolveUuidClaim,
  decide: decideUuidClaim,
};
