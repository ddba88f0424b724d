export { createArqs, getArq, MAX_ARQS_PER_CREATE } from "./create.js";
export { allocateForArq, failBind, startBinds, type AllocateResult, type ArqBinding } from "./bind.js";
export { deleteArqs, unbindArqs } from "./release.js";
export { visibleTo } from "./shared.js";
