/**
 * The boot storm on the fleet: at a set rate, Nova's flow on a random host's fake FPGA (create an
 * ARQ, subscribe to accelerator-request-bound, bind, wait for the event), then the instance goes
 * away (Nova deletes its ARQs by instance, which frees the handle). Open loop: a slow server gets more flows in flight.
 */
import { randomUUID } from "node:crypto";
import { BenchClient } from "../client.js";
import { stormRpUuid } from "./host-devices.js";

const BOUND = `subscription($arqs: [ID!]) { acceleratorRequestBound(arqUuids: $arqs) { tag status reason } }`;
const CREATE = `mutation($name: String!) { createAcceleratorRequests(deviceProfileName: $name) { uuid } }`;
const BIND = `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`;
const DELETE = `mutation($i: ID) { deleteAcceleratorRequests(instanceUuid: $i) }`;

export const STORM_PROFILE = { "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" };

export interface StormOptions {
  url: string;
  /** A token with the service role (Nova's). */
  token: string;
  profile: string;
  /** The hosts it may bind on (those registered). */
  hostnames: () => string[];
  bootsPerS: number;
  connections: number;
  random: () => number;
}

export class BootStorm {
  /** Each bind: to its last event (`ms`), and to the mutation's answer (`answerMs`). */
  readonly bindMs: Array<{ at: number; ms: number; answerMs: number }> = [];
  flows = 0;
  failed = 0;
  readonly failures: string[] = [];
  private inFlight = 0;
  private pool: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private idle: (() => void) | undefined;
  private clients: BenchClient[] = [];

  constructor(private readonly o: StormOptions) {}

  start(): void {
    if (this.o.bootsPerS <= 0) return;
    this.clients = Array.from({ length: this.o.connections }, () => new BenchClient(this.o.url, this.o.token));
    let next = 0;
    this.timer = setInterval(() => void this.flow(this.clients[next++ % this.clients.length]!), 1000 / this.o.bootsPerS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.inFlight > 0) await new Promise<void>((r) => (this.idle = r));
    await Promise.all(this.clients.map((c) => c.close()));
  }

  private async flow(c: BenchClient): Promise<void> {
    this.inFlight++;
    this.flows++;
    if (this.pool.length === 0 || this.flows % 100 === 0) this.pool = this.o.hostnames();
    const hostname = this.pool[Math.floor(this.o.random() * this.pool.length)]!;
    try {
      const arqs: Array<{ uuid: string }> = (await c.gql(CREATE, { name: this.o.profile })).createAcceleratorRequests;
      const uuids = arqs.map((a) => a.uuid);
      const bound = c.waitFor<{ acceleratorRequestBound: { status: string; reason: string | null } }>(BOUND, { arqs: uuids }, uuids.length);
      // A lost connection rejects it while the bind is still being sent: the flow fails below, not the process.
      bound.catch(() => undefined);
      const instanceUuid = randomUUID();
      const t0 = performance.now();
      await c.gql(BIND, { b: uuids.map((arqUuid) => ({ arqUuid, hostname, deviceRpUuid: stormRpUuid(hostname), instanceUuid })) });
      const answerMs = performance.now() - t0;
      const got = await bound;
      const ms = performance.now() - t0;
      const failed = got.find((e) => e.acceleratorRequestBound.status !== "COMPLETED");
      if (failed) throw new Error(`bind on ${hostname} ${failed.acceleratorRequestBound.status}: ${failed.acceleratorRequestBound.reason}`);
      this.bindMs.push({ at: Date.now(), ms, answerMs });
      await c.gql(DELETE, { i: instanceUuid });
    } catch (err) {
      this.failed++;
      if (this.failures.length < 10) this.failures.push(`${hostname}: ${(err as Error).message}`);
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.idle?.();
    }
  }
}
