/** os-acc, the compute-node attach library: import it from other Node programs. */
export { OsAcc, type InstanceInfo, type OperationResult, type OsAccOptions, type SelectedRp } from "./osacc.js";
export { AgentUnavailable, BadRequest, BindFailed, OsAccError, ServiceError, UnsupportedOperation } from "./errors.js";
export { parseExtraSpecs, type AcceleratorSpec } from "./extra-specs.js";
export { attachedAccelerator, mdevHostdev, pciHostdev, type AttachedAccelerator } from "./hostdev.js";
