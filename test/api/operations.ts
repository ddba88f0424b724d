/** The operations a compute scheduler and an operator send, as the tests and benchmarks use them. */
export const ARQ_FIELDS = `uuid state deviceProfileName deviceProfileGroupId hostname deviceRpUuid instanceUuid projectId
  attachHandleType attachHandleUuid attachHandleInfo revision`;

export const CREATE_PROFILE = `mutation($input: DeviceProfileInput!) { createDeviceProfile(input: $input) { uuid name description groups } }`;
export const REPORT = `mutation($hostname: String!, $devices: [DriverDeviceInput!]!) {
  reportHostInventory(hostname: $hostname, devices: $devices) { hostname added updated removed unchanged revision } }`;
export const CONFIRM = `mutation($hostname: String!, $digest: String!) {
  confirmHostInventory(hostname: $hostname, digest: $digest) { hostname added updated removed unchanged revision digest } }`;
export const RPS = `query($hostname: String) { resourceProviders(hostname: $hostname) {
  uuid name parentProviderName resourceClass total reserved used traits } }`;
export const CREATE_ARQS = `mutation($name: String!, $group: Int) {
  createAcceleratorRequests(deviceProfileName: $name, groupIndex: $group) { ${ARQ_FIELDS} } }`;
export const BIND = `mutation($bindings: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $bindings) { ${ARQ_FIELDS} } }`;
export const UNBIND = `mutation($uuids: [ID!]!) { unbindAcceleratorRequests(arqUuids: $uuids) { ${ARQ_FIELDS} } }`;
export const DELETE_ARQS = `mutation($uuids: [ID!], $instance: ID) { deleteAcceleratorRequests(arqUuids: $uuids, instanceUuid: $instance) }`;
export const ARQS_OF = `query($instance: ID) { acceleratorRequests(filter: { instanceUuid: $instance }) {
  totalCount nodes { ${ARQ_FIELDS} } } }`;
export const BOUND = `subscription($instance: ID, $arqs: [ID!]) { acceleratorRequestBound(instanceUuid: $instance, arqUuids: $arqs) {
  name serverUuid tag status reason arq { uuid state attachHandleType attachHandleInfo } } }`;
export const SET_STATUS = `mutation($uuid: ID!, $status: DeviceStatus!) { setDeviceStatus(uuid: $uuid, status: $status) { uuid status } }`;
export const DEVICES = `query { devices { totalCount nodes { uuid hostname status deployables { uuid rpUuid attachHandles { uuid inUse } } } } }`;

export interface BoundEvent {
  acceleratorRequestBound: {
    name: string;
    serverUuid: string;
    tag: string;
    status: "COMPLETED" | "FAILED";
    reason: string | null;
    arq: { uuid: string; state: string; attachHandleType: string | null; attachHandleInfo: Record<string, string> | null };
  };
}
