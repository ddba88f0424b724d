/** Events of stream `instance-<uuid>`: which ARQs are bound to an instance ("an instance is bound once"). */
export interface InstanceArqsBound {
  type: "InstanceArqsBound";
  data: { instanceUuid: string; arqUuids: string[]; at: string };
}
export interface InstanceArqsReleased {
  type: "InstanceArqsReleased";
  data: { instanceUuid: string; arqUuids: string[]; at: string };
}
export type InstanceEvent = InstanceArqsBound | InstanceArqsReleased;
