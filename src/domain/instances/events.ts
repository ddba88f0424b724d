/** Events of stream `instance-<uuid>`: which ARQs are bound to an instance ("an instance is bound once"), and what was done to it. */
import type { OperationEffect } from "./operations.js";

export interface InstanceArqsBound {
  type: "InstanceArqsBound";
  data: { instanceUuid: string; arqUuids: string[]; at: string };
}
export interface InstanceArqsReleased {
  type: "InstanceArqsReleased";
  data: { instanceUuid: string; arqUuids: string[]; at: string };
}
/** What the compute service did to the instance, and what that meant for its accelerators (operations.ts). */
export interface InstanceOperationRecorded {
  type: "InstanceOperationRecorded";
  data: { instanceUuid: string; operation: string; effect: OperationEffect; at: string };
}
export type InstanceEvent = InstanceArqsBound | InstanceArqsReleased | InstanceOperationRecorded;
