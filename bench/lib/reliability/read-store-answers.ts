/**
 * What a client may be answered while the read store has lost its data: the
 * whole truth, or UNAVAILABLE with HTTP 503 and Retry-After; anything else (an empty list, a
 * NOT_FOUND, another error) is a wrong answer. test/api/read-store-loss.test.ts and the
 * reliability suite's flush and restart scenario (read-store-flush.ts) judge with these.
 */
import { UNAVAILABLE_RETRY_AFTER_S } from "../../../src/api/services.js";

export type Verdict = "whole" | "unavailable" | "wrong";

export interface GraphqlBody {
  data?: any;
  errors?: Array<{ message?: string; extensions?: { code?: string } }>;
}

const retryAfterOk = (headers: Headers) => headers.get("retry-after") === String(UNAVAILABLE_RETRY_AFTER_S);

/** A GraphQL answer over HTTP; `isWhole` says whether its data is the truth. */
export function judgeGraphql(status: number, headers: Headers, body: GraphqlBody, isWhole: (data: any) => boolean): Verdict {
  if (!body.errors) return status === 200 && isWhole(body.data) ? "whole" : "wrong";
  return status === 503 && retryAfterOk(headers) && body.errors.every((e) => e.extensions?.code === "UNAVAILABLE") ? "unavailable" : "wrong";
}

/** A Cyborg v2 REST answer (its errors in Cyborg's error_message envelope). */
export function judgeRest(status: number, headers: Headers, body: { error_message?: string }, isWhole: (body: any) => boolean): Verdict {
  if (status === 200) return isWhole(body) ? "whole" : "wrong";
  let code: string | undefined;
  try {
    code = body.error_message ? (JSON.parse(body.error_message) as { code?: string }).code : undefined;
  } catch {
    code = undefined;
  }
  return status === 503 && retryAfterOk(headers) && code === "UNAVAILABLE" ? "unavailable" : "wrong";
}
