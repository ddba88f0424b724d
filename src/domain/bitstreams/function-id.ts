/**
 * FPGA function ids as drivers report them and profiles name them: AFU ids (hex uuids), short hex
 * strings such as the device-profile seed's '3AFB', uuids. One spelling rule for profiles and the
 * bitstream catalogue, so that `accel:function_id` and a bitstream's function id compare as strings.
 */
import { isUuid } from "../shared/json.js";

export const FUNCTION_ID_RE = /^[A-Za-z0-9_-]{1,255}$/;

/** A uuid in its canonical lower-case form; any other id as written. Null when it is not an id. */
export function normalizeFunctionId(value: unknown): string | null {
  if (typeof value !== "string" || !FUNCTION_ID_RE.test(value)) return null;
  return isUuid(value) ? value.toLowerCase() : value;
}
