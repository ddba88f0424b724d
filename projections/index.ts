/** Every read model the projector keeps up to date. */
import type { Projection } from "../src/reactors/projector/projection.js";
import { projection as arqs } from "./arqs/projection.js";
import { projection as audit } from "./audit/projection.js";
import { projection as deployables } from "./deployables/projection.js";
import { projection as deviceProfiles } from "./device-profiles/projection.js";
import { projection as deviceTree } from "./device-tree/projection.js";
import { projection as resourceProviders } from "./resource-providers/projection.js";

export const projections: readonly Projection[] = [deviceTree, deployables, arqs, deviceProfiles, resourceProviders, audit];
