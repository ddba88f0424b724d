/**
 * Nova's boot flow as a load: each client, in a loop, creates an ARQ from a profile, binds it to a
 * host's resource provider and a new instance, waits until the bind resolves (polling the ARQ, or
 * the acceleratorRequestBound subscription as Nova waits for the event), and deletes the
 * instance's ARQs. Every answer the service gave is written in a ledger, so that after a crash one
 * can check that nothing acknowledged was lost.
 */
import { randomUUID } from "node:crypto";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { fakeHost } from "../fake-host.js";
import { ROLE_TOKENS } from "./tokens.js";
import { gql } from "./wire.js";

export const CREATE = `mutation($n: String!) { createAcceleratorRequests(deviceProfileName: $n) { uuid state } }`;
export const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;
export const ARQ = `query($u: ID!) { acceleratorRequest(uuid: $u) { uuid state } }`;
export const DELETE_INSTANCE = `mutation($i: ID) { deleteAcceleratorRequests(instanceUuid: $i) }`;
const BOUND = `subscription($a: [ID!]) { acceleratorRequestBound(arqUuids: $a) { status arq { state } } }`;

/** What the service acknowledged (or was sent) for one ARQ. */
export interface LedgerEntry {
  /** The bind was sent; its answer may not have come. */
  bindSent?: boolean;
  /** The bind was acknowledged, to this instance. */
  boundTo?: string;
  deleteSent?: boolean;
  /** The delete was acknowledged. */
  deleted?: boolean;
}

export type Ledger = Map<string, LedgerEntry>;

export interface Target {
  hostname: string;
  rpUuid: string;
}

export interface FlowStats {
  flows: number;
  failed: number;
  /** The first few failures, for a report. */
  errors: string[];
}

export interface FlowOptions {
  url: string;
  profile: string;
  targets: Target[];
  ledger: Ledger;
  /** poll: read the ARQ until it leaves BIND_STARTED; subscription: wait for acceleratorRequestBound. */
  waitBy: "poll" | "subscription";
  /** How long a flow may wait for its bind to resolve before it counts as failed. */
  resolveTimeoutMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One client running boot flows until `running()` says stop. */
export class BootFlowClient {
  private ws: Client | undefined;
  constructor(
    private readonly opts: FlowOptions,
    private readonly index: number,
  ) {
    if (opts.waitBy === "subscription") {
      this.ws = createClient({
        url: opts.url.replace(/^http/, "ws"),
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${ROLE_TOKENS.service.token}` },
        retryAttempts: 0,
        keepAlive: 10_000,
        lazy: true,
      });
    }
  }

  async run(running: () => boolean, stats: FlowStats): Promise<void> {
    while (running()) {
      try {
        const ok = await this.flow();
        stats.flows++;
        if (!ok) stats.failed++;
      } catch (err) {
        if (!running()) return; // the service was killed under this flow: not a failure of the flow
        stats.flows++;
        stats.failed++;
        if (stats.errors.length < 10) stats.errors.push(String((err as Error).message ?? err).slice(0, 300));
        await sleep(200);
      }
    }
  }

  /** One boot: true when the ARQ was BOUND and then deleted. */
  async flow(): Promise<boolean> {
    const { url, profile, targets, ledger } = this.opts;
    const created = await gql(url, "service", CREATE, { n: profile });
    const arq = created.createAcceleratorRequests[0].uuid as string;
    const entry: LedgerEntry = {};
    ledger.set(arq, entry);
    const instance = randomUUID();
    const target = targets[this.index % targets.length]!;
    const waiting = this.ws ? this.waitForEvent(arq) : undefined;
    entry.bindSent = true;
    let state: string;
    try {
      const bound = await gql(url, "service", BIND, { b: [{ arqUuid: arq, hostname: target.hostname, deviceRpUuid: target.rpUuid, instanceUuid: instance }] });
      entry.boundTo = instance;
      state = bound.bindAcceleratorRequests[0].state;
      state = waiting ? await waiting.result : await this.poll(arq, state);
    } finally {
      waiting?.cancel();
    }
    entry.deleteSent = true;
    const deleted = (await gql(url, "service", DELETE_INSTANCE, { i: instance })).deleteAcceleratorRequests as string[];
    if (deleted.includes(arq)) entry.deleted = true;
    return state === "BOUND" && entry.deleted === true;
  }

  private async poll(arq: string, state: string): Promise<string> {
    const deadline = Date.now() + (this.opts.resolveTimeoutMs ?? 300_000);
    while (state === "BIND_STARTED") {
      if (Date.now() > deadline) throw new Error(`ARQ ${arq} stayed BIND_STARTED`);
      await sleep(100);
      state = (await gql(this.opts.url, "service", ARQ, { u: arq })).acceleratorRequest?.state ?? "GONE";
    }
    return state;
  }

  private waitForEvent(arq: string): { result: Promise<string>; cancel: () => void } {
    let cancel = () => undefined as void;
    const result = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no acceleratorRequestBound for ${arq}`)), this.opts.resolveTimeoutMs ?? 300_000);
      const dispose = this.ws!.subscribe<{ acceleratorRequestBound: { status: string; arq: { state: string } } }>(
        { query: BOUND, variables: { a: [arq] } },
        {
          next: (v) => {
            if (v.errors?.length) return reject(new Error(JSON.stringify(v.errors)));
            clearTimeout(timer);
            resolve(v.data!.acceleratorRequestBound.arq.state);
          },
          error: (e) => (clearTimeout(timer), reject(e instanceof Error ? e : new Error(JSON.stringify(e)))),
          complete: () => undefined,
        },
      );
      cancel = () => (clearTimeout(timer), dispose());
    });
    result.catch(() => undefined);
    return { result, cancel: () => cancel() };
  }

  async close(): Promise<void> {
    await this.ws?.dispose();
  }
}

/** Runs `clients` boot-flow clients until `running()` turns false; resolves when all have stopped. */
export async function runBootFlows(opts: FlowOptions, clients: number, running: () => boolean, stats: FlowStats): Promise<void> {
  const all = Array.from({ length: clients }, (_, i) => new BootFlowClient(opts, i));
  try {
    await Promise.all(all.map((c) => c.run(running, stats)));
  } finally {
    await Promise.all(all.map((c) => c.close()));
  }
}

/** Reports `hosts` hosts of `handles` attach handles each, and a one-FPGA profile; returns the bind targets. */
export async function prepareBootTargets(url: string, profile: string, hosts: number, handles: number): Promise<Target[]> {
  await gql(url, "admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, {
    p: { name: profile, groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] },
  });
  const targets: Target[] = [];
  for (let h = 0; h < hosts; h++) {
    const hostname = `storm-${h}`;
    await gql(url, "admin", `mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { revision } }`, { h: hostname, d: fakeHost(hostname, handles) });
    const [rp] = (await gql(url, "admin", `query($h: String) { resourceProviders(hostname: $h) { uuid } }`, { h: hostname })).resourceProviders;
    targets.push({ hostname, rpUuid: rp.uuid });
  }
  return targets;
}
