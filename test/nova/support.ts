/** Shared by the Nova notifier tests: a notifier over a memory log, pointed at the Nova stand-in; binds as the deciders write them. */
import { randomUUID } from "node:crypto";
import type { DomainEvent } from "../../src/domain/events.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { startNovaNotifier, type NovaConfig, type NovaNotifier } from "../../src/reactors/nova/notifier.js";
import { MemoryReadStore } from "../../src/infra/readstore/memory.js";
import { FAKE_HOST_DEVICES, startTestService, TOKENS, type TestService } from "../api/harness.js";
import * as op from "../api/operations.js";
import { bindPatch, restClient } from "../rest/support.js";
import { append, arqCreated, bindFailed, bindStarted, bound } from "../projections/support.js";
import { afterAll, beforeAll } from "vitest";
import { memoryLog, startNovaStandIn, type LogLine, type NovaStandIn } from "../support/nova.js";

/** Generous: the machine may be slow; no test waits this long when it works. */
export const WAIT = { timeout: 25_000, interval: 20 };
/** For a test that waits several times. */
export const SLOW = { timeout: 120_000 };

export interface Started {
  notifier: NovaNotifier;
  es: MemoryEventStore;
  lines: LogLine[];
}

export async function startNotifier(nova: NovaStandIn, o: { es?: MemoryEventStore; config?: Partial<NovaConfig> } = {}): Promise<Started> {
  const es = o.es ?? new MemoryEventStore();
  const { log, lines } = memoryLog();
  const notifier = await startNovaNotifier({
    store: es,
    readStore: new MemoryReadStore(),
    config: { NOVA_URL: nova.url, NOVA_TOKEN: nova.token, NOVA_EVENT_RETRY_S: 300, ...o.config },
    log,
    tuning: { backoff: { minMs: 20, maxMs: 200 }, heldRetryMs: 50, coalesceMs: 50, statusEveryMs: 100 },
  });
  return { notifier, es, lines };
}

export const uuid = () => randomUUID();

/** An ARQ created and bound to the instance: its bind completes. */
export const boundArq = (arq: string, instance: string): DomainEvent[] => [arqCreated(arq), bindStarted(arq, "h1", instance), bound(arq, { instance })];
/** An ARQ whose bind fails. */
export const failedArq = (arq: string, instance: string, reason = "no free attach handle"): DomainEvent[] => [arqCreated(arq), bindStarted(arq, "h1", instance), bindFailed(arq, reason, instance)];

export const write = (es: MemoryEventStore, events: readonly DomainEvent[]) => append(es, events);

/** What the stand-in accepted, as "<instance> <arq> <status>". */
export const acceptedOf = (nova: NovaStandIn) => nova.accepted().map((e) => `${e.server_uuid} ${e.tag} ${e.status}`);
export const said = (lines: LogLine[], level: number, msg: RegExp) => lines.filter((l) => l.level === level && msg.test(l.msg));

// ---- the whole service, as Nova and a scheduler use it -------------------------------------------


/** For a test file: a Nova stand-in and a service pointed at it, with compute1 set up (started before its tests, stopped after). */
export function serviceWithNova(handles?: number): { nova: NovaStandIn; t: TestService; rp: string } {
  const ctx = {} as { nova: NovaStandIn; t: TestService; rp: string };
  beforeAll(async () => {
    ctx.nova = await startNovaStandIn();
    ctx.t = await startServiceFor(ctx.nova);
    ctx.rp = await setUpHost(ctx.t, handles);
  }, 120_000);
  afterAll(async () => {
    await ctx.t?.close();
    await ctx.nova?.stop();
  });
  return ctx;
}

/** NOVA_URL pointed at the stand-in, and a short backoff so a recovered Nova is seen soon. */
export async function startServiceFor(nova: NovaStandIn, o: { env?: Record<string, string>; dataDir?: string } = {}): Promise<TestService> {
  return startTestService({
    env: { NOVA_URL: nova.url, NOVA_TOKEN: nova.token, ...o.env },
    dataDir: o.dataDir,
    overrides: { nova: { backoff: { minMs: 50, maxMs: 500 }, heldRetryMs: 100, statusEveryMs: 100 } },
  });
}

/** Profiles "one" (one ARQ) and "two" (two ARQs), and compute1 with handles; returns compute1's RP. */
export async function setUpHost(t: TestService, handles = 16): Promise<string> {
  await t.ok("admin", op.CREATE_PROFILE, { input: { name: "one", groups: [{ "resources:FPGA": "1" }] } });
  await t.ok("admin", op.CREATE_PROFILE, { input: { name: "two", groups: [{ "resources:FPGA": "1" }, { "resources:FPGA": "1" }] } });
  await t.ok("agent", op.REPORT, { hostname: "compute1", devices: FAKE_HOST_DEVICES(handles) });
  return (await t.ok("service", op.RPS, { hostname: "compute1" })).resourceProviders[0].uuid as string;
}

/** Nova's way over REST: POST the ARQs of a profile, then one PATCH binding them all to the instance. */
export async function restBind(t: TestService, rp: string, profile: string, instance: string, hostname = "compute1"): Promise<string[]> {
  const rest = restClient(t.url);
  const created = await rest.call("service", "POST", "/v2/accelerator_requests", { body: { device_profile_name: profile } });
  if (created.status !== 201) throw new Error(`POST ARQs: ${created.status} ${created.text}`);
  const uuids = (created.json.arqs as Array<{ uuid: string }>).map((a) => a.uuid);
  const r = await rest.call("service", "PATCH", "/v2/accelerator_requests", { body: bindPatch(uuids, { hostname, rp, instance }) });
  if (r.status !== 202) throw new Error(`PATCH bind: ${r.status} ${r.text}`);
  return uuids;
}

/** The same over GraphQL; returns the ARQs as the mutation answered them. */
export async function graphqlBind(t: TestService, rp: string, profile: string, instance: string): Promise<Array<{ uuid: string; state: string }>> {
  const arqs = (await t.ok("service", op.CREATE_ARQS, { name: profile })).createAcceleratorRequests as Array<{ uuid: string }>;
  const bindings = arqs.map((a) => ({ arqUuid: a.uuid, hostname: "compute1", deviceRpUuid: rp, instanceUuid: instance }));
  return (await t.ok("service", op.BIND, { bindings })).bindAcceleratorRequests;
}

export async function novaFollower(t: TestService): Promise<Record<string, unknown> | undefined> {
  const body = (await (await fetch(new URL("/readyz", t.url), { headers: { authorization: `Bearer ${TOKENS.admin.token}` } })).json()) as { followers?: Array<Record<string, unknown>> };
  return body.followers?.find((f) => f.name === "nova-notifier");
}

/** The requests Nova got for this instance, each as its events' "<tag> <status>". */
export const requestsFor = (nova: NovaStandIn, instance: string) =>
  nova.calls.filter((c) => c.codes.length && c.events.some((e) => e.server_uuid === instance)).map((c) => c.events.map((e) => `${e.tag} ${e.status}`));
