/**
 * What can go wrong sending events to Nova, typed so the notifier knows what to do: wait and try
 * again (Nova is down or overloaded), or keep trying while it shouts (Nova refuses the request:
 * a token, a role or NOVA_URL is wrong). Messages name the instance and quote Nova's answer.
 */

export interface NovaAnswer {
  /** 0: no answer (refused, reset, timed out). */
  status: number;
  /** Nova's message, or the start of the body. */
  detail: string;
}

export abstract class NovaError extends Error {
  abstract readonly code: "NOVA_UNAVAILABLE" | "NOVA_REFUSED";
  constructor(
    message: string,
    readonly instanceUuid: string,
    readonly answer: NovaAnswer,
  ) {
    super(message);
  }
}

/** No answer, a timeout, or a 5xx: retried with a backoff until Nova answers. */
export class NovaUnavailableError extends NovaError {
  override name = "NovaUnavailableError";
  readonly code = "NOVA_UNAVAILABLE";
  constructor(url: string, instanceUuid: string, answer: NovaAnswer) {
    super(`Nova at ${url} is unavailable: events for instance ${instanceUuid}: ${answer.status || "no answer"} ${answer.detail}`.trim(), instanceUuid, answer);
  }
}

/** 401, 403 or another 4xx for the whole request: a configuration problem; retried, and logged as an error. */
export class NovaRefusedError extends NovaError {
  override name = "NovaRefusedError";
  readonly code = "NOVA_REFUSED";
  constructor(url: string, instanceUuid: string, answer: NovaAnswer) {
    super(`Nova at ${url} refused the events for instance ${instanceUuid}: ${answer.status} ${answer.detail}${hint(answer.status)}`, instanceUuid, answer);
  }
}

function hint(status: number): string {
  if (status === 401) return " (is NOVA_TOKEN a valid token?)";
  if (status === 403) return " (does NOVA_TOKEN's user have the admin or service role Nova's os_compute_api:os-server-external-events:create policy asks for?)";
  if (status === 404) return " (is NOVA_URL the compute endpoint, e.g. http://controller:8774/v2.1?)";
  return "";
}
