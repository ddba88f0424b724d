/** Events of stream `deviceProfile-<name>` and the uuid reservation stream `deviceProfileUuid-<uuid>`. */

/** A group as the operator wrote it; key order is the operator's. Values are strings, as Cyborg stores them. */
export type ProfileGroup = Record<string, string>;

export interface DeviceProfileCreated {
  type: "DeviceProfileCreated";
  data: { uuid: string; name: string; description: string | null; groups: ProfileGroup[]; createdAt: string };
}
export interface DeviceProfileDeleted {
  type: "DeviceProfileDeleted";
  data: { uuid: string; name: string; deletedAt: string };
}
/** ARQs were created from this profile (recorded on the profile stream so deletion can see live users). */
export interface DeviceProfileArqsCreated {
  type: "DeviceProfileArqsCreated";
  data: { profileUuid: string; arqUuids: string[] };
}
/** ARQs created from this profile were deleted. */
export interface DeviceProfileArqsDeleted {
  type: "DeviceProfileArqsDeleted";
  data: { profileUuid: string; arqUuids: string[] };
}

export type DeviceProfileEvent =
  | DeviceProfileCreated
  | DeviceProfileDeleted
  | DeviceProfileArqsCreated
  | DeviceProfileArqsDeleted;

/** Stream `deviceProfileUuid-<uuid>`: which profile name holds a uuid. */
export interface DeviceProfileUuidClaimed {
  type: "DeviceProfileUuidClaimed";
  data: { uuid: string; name: string };
}
export interface DeviceProfileUuidReleased {
  type: "DeviceProfileUuidReleased";
  data: { uuid: string; name: string };
}
export type DeviceProfileUuidEvent = DeviceProfileUuidClaimed | DeviceProfileUuidReleased;
