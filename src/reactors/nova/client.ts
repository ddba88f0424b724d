/**
 * A small client for Nova's os-server-external-events (compute API microversion 2.82, which added
 * accelerator-request-bound): Node's fetch, the token as X-Auth-Token, one request per call, and
 * Nova's answer per event (cyborg-reference 2.3; nova/api/openstack/compute/server_external_events.py):
 * - 200: every event accepted;
 * - 207: per-event `code`: 200 accepted, 404 the instance does not exist, 422 it is not on a host yet;
 * - 404 for the whole request (Nova before 2024.1: "No instances found for any event"): every event 404.
 * Anything else throws a typed error (errors.ts).
 */
import type { NovaBoundEvent } from "../../domain/arqs/bound-notification.js";
import { NovaRefusedError, NovaUnavailableError, type NovaAnswer } from "./errors.js";

export const NOVA_MICROVERSION = "2.82";
/** The events Nova takes from us (one kind: a resolved bind). */
export type NovaEvent = NovaBoundEvent;

export interface NovaClientOptions {
  /** The compute endpoint, e.g. http://controller:8774/v2.1. */
  url: string;
  token?: string;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

export class NovaClient {
  readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(options: NovaClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
    this.headers = {
      accept: "application/json",
      "content-type": "application/json",
      "x-openstack-nova-api-version": NOVA_MICROVERSION,
      "openstack-api-version": `compute ${NOVA_MICROVERSION}`,
      ...(options.token ? { "x-auth-token": options.token } : {}),
    };
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Sends the events of one instance in one request; resolves with Nova's code for each, in order. */
  async sendEvents(instanceUuid: string, events: readonly NovaEvent[], signal?: AbortSignal): Promise<number[]> {
    let res: Response;
    let text: string;
    try {
      const timeout = AbortSignal.timeout(this.timeoutMs);
      res = await fetch(`${this.url}/os-server-external-events`, {
        method: "POST",
        headers: this.headers,
        body: JSON.stringify({ events }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const e = err as Error & { cause?: { code?: string; message?: string } };
      throw new NovaUnavailableError(this.url, instanceUuid, { status: 0, detail: `(${e.cause?.code ?? e.cause?.message ?? e.message})` });
    }
    const answer: NovaAnswer = { status: res.status, detail: detailOf(text) };
    if (res.status === 200) return events.map(() => 200);
    if (res.status === 207) return codesOf(text, events, () => new NovaRefusedError(this.url, instanceUuid, { ...answer, detail: `a 207 without a code per event: ${answer.detail}` }));
    if (res.status === 404 && isNoInstances(text)) return events.map(() => 404);
    if (res.status >= 500) throw new NovaUnavailableError(this.url, instanceUuid, answer);
    throw new NovaRefusedError(this.url, instanceUuid, answer);
  }
}

/** Nova lists the events it was sent, in order, each with its code (matched by tag and instance). */
function codesOf(text: string, sent: readonly NovaEvent[], malformed: () => Error): number[] {
  let answered: Array<Partial<NovaEvent> & { code?: unknown }>;
  try {
    answered = (JSON.parse(text) as { events?: typeof answered }).events ?? [];
  } catch {
    throw malformed();
  }
  return sent.map((e, i) => {
    const a = answered.find((x) => x.tag === e.tag && x.server_uuid === e.server_uuid) ?? answered[i];
    if (typeof a?.code !== "number") throw malformed();
    return a.code;
  });
}

/** Nova's whole-request 404 names no instance; any other 404 (a wrong NOVA_URL) is a refusal. */
function isNoInstances(text: string): boolean {
  try {
    const body = JSON.parse(text) as { itemNotFound?: { message?: string } };
    return /no instances found/i.test(body.itemNotFound?.message ?? "");
  } catch {
    return false;
  }
}

/** Nova's faults are {"<kind>": {"message": ..., "code": ...}}; keystonemiddleware's {"error": {"message": ...}}. */
function detailOf(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, { message?: unknown } | undefined>;
    const first = Object.values(body)[0];
    if (first && typeof first.message === "string") return squash(first.message);
  } catch {
    // not JSON: a proxy's page, say
  }
  return squash(text).slice(0, 300);
}

const squash = (s: string) => s.replace(/\s+/g, " ").trim();
