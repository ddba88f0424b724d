/** The version documents: GET / (every version) and GET /v2 (this one). Public, as in Cyborg. */
import { MAX_VERSION, MIN_VERSION } from "./microversion.js";

const DESCRIPTION =
  "Cyborg (previously known as Nomad) is an OpenStack project that aims to provide a general purpose management framework for " +
  "acceleration resources (i.e. various types of accelerators such as Crypto cards, GPU, FPGA, NVMe/NOF SSDs, ODP, DPDK/SPDK and so on). " +
  "This is cyborg-es: the same API over an event-sourced core.";

function v2(publicUrl: string, id: string) {
  return { id, status: "CURRENT", min_version: MIN_VERSION, max_version: MAX_VERSION, links: [{ href: `${publicUrl}/accelerator/v2/`, rel: "self" }] };
}

export function rootDocument(publicUrl: string) {
  const version = v2(publicUrl, "v2");
  return { name: "OpenStack Cyborg API", description: DESCRIPTION, versions: [version], default_version: version };
}

export const v2Document = (publicUrl: string) => v2(publicUrl, "v2.0");
