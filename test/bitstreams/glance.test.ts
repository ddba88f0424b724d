import { GlanceCatalogue } from "../../src/infra/bitstreams/glance.js";
import { startGlance } from "../support/glance.js";
import { catalogueContract, MAX_BYTES } from "./contract.js";

// Debian's glance-api: test/support/global-setup.ts makes sure it is installed.
catalogueContract(
  "Glance (Debian's glance-api: images with accel: properties)",
  async () => {
    const glance = await startGlance();
    return { catalogue: new GlanceCatalogue({ url: glance.url, maxBytes: MAX_BYTES }), close: () => glance.stop() };
  });
