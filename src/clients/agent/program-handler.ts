/** The PROGRAM requests: program a region with a bitstream of the service's catalogue (programming.ts). */
import { closeProgramming, handleRequest, type ProgrammingOptions, type ProgrammingRequestMessage } from "./programming.js";
import type { AgentRequestHandler } from "./requests.js";

const SELECTION = "requestId hostname deployableUuid deployableName driverName controlPath bitstreamId bitstreamName checksum size functionId downloadPath";

export function programHandler(opts: ProgrammingOptions): AgentRequestHandler<ProgrammingRequestMessage> {
  return {
    kind: "PROGRAM",
    field: "program",
    selection: SELECTION,
    // One request at a time per region.
    lane: (r) => r.deployableUuid,
    handle: (r) => handleRequest(opts, r),
    close: () => closeProgramming(opts),
  };
}
