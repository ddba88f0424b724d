/** Every domain event, for projections and process managers that read the whole log. */
import type { ArqEvent } from "./arqs/events.js";
import type { BitstreamEvent } from "./bitstreams/events.js";
import type { DeviceProfileEvent, DeviceProfileUuidEvent } from "./device-profiles/events.js";
import type { IdempotencyEvent } from "./idempotency/events.js";
import type { InstanceEvent } from "./instances/events.js";
import type { InventoryEvent } from "./inventory/events.js";
import type { QuotaEvent } from "./quotas/events.js";

export type DomainEvent = DeviceProfileEvent | DeviceProfileUuidEvent | InventoryEvent | ArqEvent | InstanceEvent | BitstreamEvent | IdempotencyEvent | QuotaEvent;

export type { ArqEvent, BitstreamEvent, DeviceProfileEvent, DeviceProfileUuidEvent, IdempotencyEvent, InstanceEvent, InventoryEvent, QuotaEvent };
