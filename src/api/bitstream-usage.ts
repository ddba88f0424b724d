/**
 * What still uses a bitstream, read from the read models before it is deleted: the regions running
 * it or being programmed with it, and the profiles naming it. The check is as fresh as the read
 * models (a mutation waits for them); a bind racing a deletion fails cleanly at download instead.
 */
import { deployablesUsingBitstream } from "../../projections/deployables/queries.js";
import { listProfiles } from "../../projections/device-profiles/queries.js";
import type { ReadStore } from "../infra/readstore/port.js";

export async function bitstreamUsage(store: ReadStore, bitstreamId: string): Promise<string[]> {
  const [{ running, programming }, profiles] = await Promise.all([deployablesUsingBitstream(store, bitstreamId), listProfiles(store)]);
  return [
    ...running.map((d) => `deployable ${d.name} on ${d.hostname} runs it`),
    ...programming.map((d) => `deployable ${d.name} on ${d.hostname} is being programmed with it`),
    ...profiles.filter((p) => p.groups.some((g) => g["accel:bitstream_id"] === bitstreamId)).map((p) => `device profile ${p.name} names it`),
  ];
}
