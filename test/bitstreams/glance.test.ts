import { GlanceCatalogue } from "../../src/bitstreams/glance.js";
import { hasGlance, startGlance } from "../support/glance.js";
import { catalogueContract, MAX_BYTES } from "./contract.js";

const available = hasGlance();
if (!available) console.warn("[glance] glance-api is not installed: the Glance catalogue tests are skipped (apt-get install glance-api)");

catalogueContract(
  "Glance (Debian's glance-api: images with accel: properties)",
  async () => {
    const glance = await startGlance();
    return { catalogue: new GlanceCatalogue({ url: glance.url, maxBytes: MAX_BYTES }), close: () => glance.stop() };
  },
  { skip: !available },
);
