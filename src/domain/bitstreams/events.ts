/** Events of stream `bitstreams-catalogue`: the embedded catalogue's metadata (content is stored by SHA-256 in DATA_DIR). */
import type { Bitstream } from "./bitstream.js";

export interface BitstreamAdded {
  type: "BitstreamAdded";
  data: Bitstream;
}
export interface BitstreamRemoved {
  type: "BitstreamRemoved";
  data: { id: string; name: string; checksum: string; at: string };
}

export type BitstreamEvent = BitstreamAdded | BitstreamRemoved;
