/** Events of stream `deviceProfile-<name>` and the uuid reservation stream `deviceProfileUuid-<uuid>`. */

/** A group as the operator wrote it; key order is the operator's. Values are strings, as Cyborg stores them. */
export type ProfileGroup = Record<string, string>;

export interface DeviceProfileCreated {
  type: "DeviceProfileCreated";
  data: {
    uuid: string;
    name: string;
    description: string | null;
    groups: ProfileGroup[];
    createdAt: string;
    /** Made for inline accelerator specs (os-acc): listed to nobody, deleted with its last ARQ. Absent: false. */
    inline?: boolean;
  };
}
export interface DeviceProfileDeleted {
  type: "DeviceProfileDeleted";
  /** version: the last version (absent in events written before profiles had versions: 1). */
  data: { uuid: string; name: string; deletedAt: string; version?: number };
}

/** A renaming of traits and resource classes (`old -> new`), applied to profiles on an upgrade. */
export interface ProfileMigrationMapping {
  traits: Record<string, string>;
  resourceClasses: Record<string, string>;
}

/**
 * A new version of the profile: its description and groups as they are from now on. ARQs made
 * before keep the version (and the group copy) they were made from.
 */
export interface DeviceProfileUpdated {
  type: "DeviceProfileUpdated";
  data: {
    uuid: string;
    name: string;
    version: number;
    description: string | null;
    groups: ProfileGroup[];
    at: string;
    /** Set when a migration made this version: the entries of its mapping that changed this profile. */
    migration: ProfileMigrationMapping | null;
  };
}
/** A disabled profile refuses new ARQs; the ARQs made from it are untouched. */
export interface DeviceProfileDisabled {
  type: "DeviceProfileDisabled";
  data: { uuid: string; name: string; at: string };
}
export interface DeviceProfileEnabled {
  type: "DeviceProfileEnabled";
  data: { uuid: string; name: string; at: string };
}
/**
 * On the old name's stream: the profile now lives at `newName` (same uuid, versions and ARQs).
 * Deletions of the ARQs made under the old name follow it there.
 */
export interface DeviceProfileRenamed {
  type: "DeviceProfileRenamed";
  data: { uuid: string; name: string; newName: string; at: string };
}
/** On the new name's stream: the profile as it was under `previousName`, carried over whole. */
export interface DeviceProfileRenamedFrom {
  type: "DeviceProfileRenamedFrom";
  data: {
    uuid: string;
    name: string;
    previousName: string;
    description: string | null;
    groups: ProfileGroup[];
    version: number;
    enabled: boolean;
    createdAt: string;
    /** The ARQs made from the profile and still live, whatever name they were made under. */
    liveArqUuids: string[];
    at: string;
  };
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
  | DeviceProfileArqsDeleted
  | DeviceProfileUpdated
  | DeviceProfileDisabled
  | DeviceProfileEnabled
  | DeviceProfileRenamed
  | DeviceProfileRenamedFrom;

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
