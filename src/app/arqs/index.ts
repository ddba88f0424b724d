export { createArqs, getArq, MAX_ARQS_PER_CREATE } from "./create.js";
export { createArqsForGroups } from "./create-inline.js";
export { allocateForArq, allocateForArqs, startBinds, type AllocateResult } from "./bind.js";
export { createAndBind, type PlugSpec } from "./create-and-bind.js";
export { failBind } from "./fail.js";
export { deleteArqs, unbindArqs, type DeleteSelection } from "./release.js";
export { visibleTo } from "./shared.js";
export { quotaProject, type ArqQuota } from "./quota.js";
export { repairArq, type Repair } from "./invariants.js";
