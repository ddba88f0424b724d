/** The placement engine: pure decisions, explanations and capacity over candidates the read side gives. */
export * from "./types.js";
export { requestOf, groupRequestOf } from "./request.js";
export { providerFit, type Fit } from "./fit.js";
export { indexCandidates, withoutCandidates, allowedBy, staleHost, type CandidateIndex } from "./candidates.js";
export { KeptCandidates } from "./kept-index.js";
export { FreeLevels } from "./free-levels.js";
export { chooseOnHost } from "./host-choice.js";
export { place, compareChoices, type Decision } from "./place.js";
export { explain, judgeHost, shortExplanation, type Explanation, type RuleCount, type HostVerdict, type ProviderVerdict } from "./explain.js";
export { capacity, type Capacity } from "./capacity.js";
