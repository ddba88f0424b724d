/** Every read model the runner keeps up to date. */
import type { Projection } from "../src/readstore/projection.js";
import { projection as arqs } from "./arqs.js";
import { projection as deployables } from "./deployables.js";
import { projection as deviceProfiles } from "./device-profiles.js";
import { projection as deviceTree } from "./device-tree.js";
import { projection as resourceProviders } from "./resource-providers.js";

export const projections: readonly Projection[] = [deviceTree, deployables, arqs, deviceProfiles, resourceProviders];

export { arqs, deployables, deviceProfiles, deviceTree, resourceProviders };

/** The same list (the name the composition root uses). */
export const allProjections = projections;
