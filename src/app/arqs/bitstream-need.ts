/**
 * What a bind's profile group asks of its region, with the catalogue's answer (the catalogue I/O
 * a bind needs, done before decideBind, which stays pure): by accel:bitstream_id, that bitstream;
 * by accel:bitstream_name, the bitstream of that name (with or without its type suffix); by
 * accel:function_id or accel:function_name, the one bitstream declaring the function that is built
 * for the region's type (domain: chooseForFunction, chooseForFunctionName, chooseByName). A profile
 * gives at most one of the four (device-profiles/validation.ts); one stored before that rule is
 * read in this order: bitstream id, bitstream name, function id, function name. Lookups are
 * remembered for one bind call.
 */
import type { ProfileGroup } from "../../domain/device-profiles/events.js";
import { findByRp } from "../../domain/inventory/allocation.js";
import { chooseByName, chooseForFunction, chooseForFunctionName, type BitstreamNeed } from "../../domain/inventory/programming.js";
import type { HostState } from "../../domain/inventory/state.js";
import type { Bitstream } from "../../domain/bitstreams/bitstream.js";
import type { BitstreamCatalogue } from "../../infra/bitstreams/port.js";

export const BITSTREAM_ID_KEY = "accel:bitstream_id";
export const BITSTREAM_NAME_KEY = "accel:bitstream_name";
export const FUNCTION_ID_KEY = "accel:function_id";
export const FUNCTION_NAME_KEY = "accel:function_name";

export type NeedResolver = (group: ProfileGroup, host: HostState, rpUuid: string) => Promise<BitstreamNeed | null>;

export function asksForBitstream(group: ProfileGroup): boolean {
  return [BITSTREAM_ID_KEY, BITSTREAM_NAME_KEY, FUNCTION_ID_KEY, FUNCTION_NAME_KEY].some((k) => group[k] !== undefined);
}

/** A resolver for one bind call: each bitstream, name and function is looked up once. */
export function needResolver(catalogue: BitstreamCatalogue): NeedResolver {
  const byId = new Map<string, Promise<Bitstream | null>>();
  const lists = new Map<string, Promise<Bitstream[]>>();
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
    const region = findByRp(host, rpUuid)?.deployable ?? null;
    const bitstreamName = group[BITSTREAM_NAME_KEY];
    if (bitstreamName !== undefined) {
      return chooseByName(bitstreamName, await once(lists, `name:${bitstreamName}`, () => catalogue.named(bitstreamName)), region);
    }
    const functionId = group[FUNCTION_ID_KEY];
    if (functionId !== undefined) {
      return chooseForFunction(functionId, await once(lists, `function:${functionId}`, () => catalogue.withFunction(functionId)), region);
    }
    const functionName = group[FUNCTION_NAME_KEY];
    if (functionName !== undefined) {
      return chooseForFunctionName(functionName, await once(lists, `functionName:${functionName}`, () => catalogue.withFunctionName(functionName)), region);
    }
    return null;
  };
}
