/**
 * What a bind's profile group asks of its region, with the catalogue's answer (the catalogue I/O
 * a bind needs, done before decideBind, which stays pure): by accel:bitstream_id, that bitstream;
 * by accel:function_id, the one bitstream declaring the function that is built for the region's
 * type (domain: chooseForFunction). Lookups are remembered for one bind call.
 */
import type { ProfileGroup } from "../../domain/device-profiles/events.js";
import { findByRp } from "../../domain/inventory/allocation.js";
import { chooseForFunction, type BitstreamNeed } from "../../domain/inventory/programming.js";
import type { HostState } from "../../domain/inventory/state.js";
import type { Bitstream } from "../../domain/bitstreams/bitstream.js";
import type { BitstreamCatalogue } from "../../infra/bitstreams/port.js";

export const BITSTREAM_ID_KEY = "accel:bitstream_id";
export const FUNCTION_ID_KEY = "accel:function_id";

export type NeedResolver = (group: ProfileGroup, host: HostState, rpUuid: string) => Promise<BitstreamNeed | null>;

export function asksForBitstream(group: ProfileGroup): boolean {
  return group[BITSTREAM_ID_KEY] !== undefined || group[FUNCTION_ID_KEY] !== undefined;
}

/** A resolver for one bind call: each bitstream and function is looked up once. */
export function needResolver(catalogue: BitstreamCatalogue): NeedResolver {
  const byId = new Map<string, Promise<Bitstream | null>>();
  const byFunction = new Map<string, Promise<Bitstream[]>>();
  const once = <T>(memo: Map<string, Promise<T>>, key: string, load: () => Promise<T>) => {
    let p = memo.get(key);
    if (!p) memo.set(key, (p = load()));
    return p;
  };
  return async (group, host, rpUuid) => {
    const bitstreamId = group[BITSTREAM_ID_KEY];
    if (bitstreamId !== undefined) {
      const bitstream = await once(byId, bitstreamId, () => catalogue.get(bitstreamId));
      const problem = bitstream ? null : `bitstream ${bitstreamId} (accel:bitstream_id) is not in the ${catalogue.kind} catalogue`;
      return { by: "id", bitstreamId, bitstream, problem };
    }
    const functionId = group[FUNCTION_ID_KEY];
    if (functionId === undefined) return null;
    const candidates = await once(byFunction, functionId, () => catalogue.withFunction(functionId));
    return chooseForFunction(functionId, candidates, findByRp(host, rpUuid)?.deployable ?? null);
  };
}
