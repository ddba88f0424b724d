/**
 * os-acc: the calls a compute node makes to attach accelerators to instances (seed
 * cyborg-nova-glance-interaction, "os_acc Structure"), over the service's GraphQL API.
 *
 * Plug and unplug are idempotent: a second plug of an instance returns what the first attached, a
 * second unplug releases nothing. A plug that fails half-way releases what it took.
 */
import { randomUUID } from "node:crypto";
import { AgentUnavailable, BadRequest, BindFailed, ServiceError } from "./errors.js";
import { parseExtraSpecs } from "./extra-specs.js";
import { attachedAccelerator, type AttachedAccelerator, type BoundArq } from "./hostdev.js";
import { Transport, type TransportOptions } from "./transport.js";

export interface InstanceInfo {
  uuid: string;
  name?: string;
  /** The instance's project: its ARQs belong to it. */
  project?: string;
  image?: string;
}

/** The resource provider the scheduler chose (Placement's allocation); one per request group, or one for all. */
export interface SelectedRp {
  uuid: string;
  /** The compute node's name as the service knows it (default: the OsAcc's hostname). */
  hostname?: string;
}

export interface OsAccOptions extends TransportOptions {
  /** This compute node's name (the agent's --hostname). */
  hostname?: string;
  /** How long a plug waits for its binds (default 120 s; the service fails a bind after BIND_TIMEOUT_S anyway). */
  bindTimeoutMs?: number;
}

export interface OperationResult {
  operation: string;
  effect: "keep" | "release" | "move" | "plug";
  /** How many accelerators the operation released. */
  released: number;
  /** What was plugged on the new host, when the operation plugs again and a target was given. */
  plugged: AttachedAccelerator[] | null;
}

type BoundEvent = { tag: string; status: "COMPLETED" | "FAILED"; reason: string | null; arq: BoundArq & { state: string } };

const ARQ_FIELDS = "uuid state deviceProfileGroupId attachTarget attachHandleType attachHandleUuid attachHandleInfo";
const BOUND = `subscription($a: [ID!]) { acceleratorRequestBound(arqUuids: $a) { tag status reason arq { ${ARQ_FIELDS} } } }`;
const OF_INSTANCE = `query($i: ID) { acceleratorRequests(filter: { instanceUuid: $i }, first: 1000) { nodes { uuid } } }`;
const PLUG = `mutation($i: ID!, $r: [PlugProviderInput!]!, $n: String, $g: [JSON!], $p: String) {
  createAndBindAcceleratorRequests(instanceUuid: $i, providers: $r, deviceProfileName: $n, groups: $g, projectId: $p) { ${ARQ_FIELDS} }
}`;
const PLACE = `mutation($i: ID!, $h: String, $n: String, $g: [JSON!], $p: String) {
  placeAcceleratorRequests(instanceUuid: $i, instanceHost: $h, deviceProfileName: $n, groups: $g, projectId: $p) { acceleratorRequests { ${ARQ_FIELDS} } }
}`;
const DELETE_INSTANCE = `mutation($i: ID) { deleteAcceleratorRequests(instanceUuid: $i) }`;
const DELETE_ARQS = `mutation($a: [ID!]) { deleteAcceleratorRequests(arqUuids: $a) }`;
const STATUS = `query($h: String!) { hostStatus(hostname: $h) { reported programmingInProgress liveness lastReportAt placementSynced notReadyReason } }`;

interface HostReadiness {
  reported: boolean;
  programmingInProgress: number;
  liveness: "LIVE" | "STALE" | "GONE";
  lastReportAt: string | null;
  placementSynced: boolean | null;
  notReadyReason: string | null;
}
const OPERATION = `mutation($i: ID!, $o: String!) { recordInstanceOperation(instanceUuid: $i, operation: $o) { operation effect released } }`;

export class OsAcc {
  private readonly t: Transport;

  constructor(private readonly o: OsAccOptions) {
    this.t = new Transport(o);
  }

  /**
   * Waits until this host's agent has reported its inventory, reports on time, has no FPGA
   * programming in progress, and (where the service keeps Placement in sync) Placement has the
   * host's traits; AgentUnavailable after `timeoutMs` (default 60 s), saying which. A host whose
   * agent stopped reporting (stale with a last report, or gone) is AgentUnavailable at once.
   */
  async initialize(hostname = this.o.hostname, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<void> {
    if (!hostname) throw new BadRequest("initialize needs the host's name", "hostname");
    const timeoutMs = options.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { hostStatus: h } = await this.t.request<{ hostStatus: HostReadiness }>(STATUS, { h: hostname });
      const stopped = h.liveness === "GONE" || (h.liveness === "STALE" && h.lastReportAt !== null);
      if (stopped) throw new AgentUnavailable(h.notReadyReason ?? `the agent of host ${hostname} stopped reporting`);
      if (h.reported && h.liveness === "LIVE" && h.programmingInProgress === 0 && h.placementSynced !== false) return;
      if (Date.now() >= deadline) {
        const within = `${Math.round(timeoutMs / 1000)} s`;
        throw new AgentUnavailable(`${h.notReadyReason ?? `host ${hostname} is not ready`} (still so after ${within})`);
      }
      await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
    }
  }

  /**
   * Creates the instance's ARQs from the flavor's extra specs and binds them to the selected
   * provider(s) (one per request group, or one for all) in one call, waits for binds still under
   * way, and returns what to attach. When the instance already has accelerators (a second plug, or
   * a concurrent one), the service refuses the bind and deletes the ARQs it just created; the
   * instance's own are returned.
   */
  async plug(instance: InstanceInfo, selectedRp: SelectedRp | SelectedRp[] | null | undefined, extraSpecs: unknown): Promise<AttachedAccelerator[]> {
    const uuid = instanceUuid(instance);
    const spec = parseExtraSpecs(extraSpecs);
    const p = instance.project ?? null;
    const asked = { i: uuid, p, ...("profile" in spec ? { n: spec.profile } : { g: spec.groups }) };
    // One keyed call creates and binds: an answer that is lost is retried and answered, never made twice (no orphans).
    let answered: Array<BoundArq & { state: string }>;
    try {
      answered =
        selectedRp == null
          ? // No scheduler chose: the service's placement engine does, on this compute node when it has a name.
            (await this.t.request<{ placeAcceleratorRequests: { acceleratorRequests: Array<BoundArq & { state: string }> } }>(PLACE, { ...asked, h: this.o.hostname ?? null }, randomUUID()))
              .placeAcceleratorRequests.acceleratorRequests
          : (
              await this.t.request<{ createAndBindAcceleratorRequests: Array<BoundArq & { state: string }> }>(
                PLUG,
                { ...asked, r: this.providers(selectedRp).map((rp) => ({ hostname: rp.hostname, deviceRpUuid: rp.uuid })) },
                randomUUID(),
              )
            ).createAndBindAcceleratorRequests;
    } catch (err) {
      // The instance has its accelerators already (a second plug): the service deleted what it created.
      if (err instanceof ServiceError && err.code === "CONFLICT" && err.field === "instanceUuid") return await this.attachedTo(uuid);
      throw err;
    }
    if (answered.length === 0) return [];
    const arqUuids = answered.map((a) => a.uuid);
    // The service binds inline when it can: the answer then shows every ARQ bound, and nothing is
    // left to wait for. Otherwise the bound events say how the rest went (the service sends those
    // that resolved before it listened, so subscribing after the bind loses nothing).
    const bound = new Map(answered.filter((a) => a.state === "BOUND").map((a) => [a.uuid, a]));
    if (arqUuids.every((a) => bound.has(a))) return arqUuids.map((a) => attachedAccelerator(bound.get(a)!));
    try {
      return await this.waitUntilBound(arqUuids);
    } catch (err) {
      await this.release(uuid, arqUuids);
      throw err;
    }
  }

  /** Releases every accelerator of the instance; returns how many. */
  async unplug(instance: InstanceInfo): Promise<number> {
    const { deleteAcceleratorRequests } = await this.t.request<{ deleteAcceleratorRequests: string[] }>(DELETE_INSTANCE, { i: instanceUuid(instance) }, randomUUID());
    return deleteAcceleratorRequests.length;
  }

  /**
   * Records what the compute service did to the instance; the service releases the accelerators
   * when the operation calls for it. An operation that plugs again (start, unshelve, restore; resize,
   * cold-migrate and evacuate on the new host) plugs there when `target` is given.
   */
  async operation(instance: InstanceInfo, operation: string, target?: { selectedRp: SelectedRp | SelectedRp[]; extraSpecs: unknown }): Promise<OperationResult> {
    const uuid = instanceUuid(instance);
    const { recordInstanceOperation: r } = await this.t.request<{ recordInstanceOperation: { operation: string; effect: OperationResult["effect"]; released: string[] } }>(
      OPERATION,
      { i: uuid, o: operation },
    );
    const plugs = (r.effect === "plug" || r.effect === "move") && target;
    return { operation: r.operation, effect: r.effect, released: r.released.length, plugged: plugs ? await this.plug(instance, target.selectedRp, target.extraSpecs) : null };
  }

  close(): Promise<void> {
    return this.t.close();
  }

  private providers(selectedRp: SelectedRp | SelectedRp[]): Array<{ uuid: string; hostname: string }> {
    const list = Array.isArray(selectedRp) ? selectedRp : [selectedRp];
    if (list.length === 0) throw new BadRequest("selectedRp names no resource provider", "selectedRp");
    return list.map((rp, i) => {
      const field = Array.isArray(selectedRp) ? `selectedRp[${i}]` : "selectedRp";
      if (typeof rp?.uuid !== "string" || rp.uuid.length === 0) throw new BadRequest("a selected resource provider needs its uuid", `${field}.uuid`);
      const hostname = rp.hostname ?? this.o.hostname;
      if (!hostname) throw new BadRequest("a selected resource provider needs the host's name (or give OsAcc a hostname)", `${field}.hostname`);
      return { uuid: rp.uuid, hostname };
    });
  }

  private async arqsOf(uuid: string): Promise<string[]> {
    return (await this.t.request<{ acceleratorRequests: { nodes: Array<{ uuid: string }> } }>(OF_INSTANCE, { i: uuid })).acceleratorRequests.nodes.map((a) => a.uuid);
  }

  private async deleteArqs(arqUuids: string[]): Promise<void> {
    if (arqUuids.length > 0) await this.t.request(DELETE_ARQS, { a: arqUuids }).catch(() => undefined);
  }

  /** What a failed plug took: the instance's ARQs, and those it created that never reached the instance. */
  private async release(uuid: string, created: string[]): Promise<void> {
    const { deleteAcceleratorRequests: gone } = await this.t.request<{ deleteAcceleratorRequests: string[] }>(DELETE_INSTANCE, { i: uuid });
    await this.deleteArqs(created.filter((a) => !gone.includes(a)));
  }

  /** What the instance already has attached (once its binds resolved). */
  private async attachedTo(uuid: string): Promise<AttachedAccelerator[]> {
    const arqs = await this.arqsOf(uuid);
    if (arqs.length === 0) throw new ServiceError("CONFLICT", `instance ${uuid} changed while it was plugged; try again`);
    return this.waitUntilBound(arqs);
  }

  private async waitUntilBound(arqs: string[]): Promise<AttachedAccelerator[]> {
    const waiter = this.waitFor(arqs);
    try {
      return await waiter.resolved();
    } finally {
      waiter.close();
    }
  }

  /** Listens to these ARQs' bind events; `resolved()` waits until each resolved (the service fails binds after BIND_TIMEOUT_S). */
  private waitFor(arqs: string[]) {
    const events = new Map<string, BoundEvent>();
    let wake: () => void = () => undefined;
    let failure: Error | undefined;
    const stop = this.t.subscribe<{ acceleratorRequestBound: BoundEvent }>(
      BOUND,
      { a: arqs },
      (d) => {
        events.set(d.acceleratorRequestBound.tag, d.acceleratorRequestBound);
        wake();
      },
      (err) => {
        failure = err;
        wake();
      },
    );
    const timeoutMs = this.o.bindTimeoutMs ?? 120_000;
    return {
      close: stop,
      resolved: async (): Promise<AttachedAccelerator[]> => {
        const deadline = Date.now() + timeoutMs;
        while (!arqs.every((a) => events.has(a))) {
          if (failure) throw failure;
          const left = deadline - Date.now();
          if (left <= 0) throw new ServiceError("TIMEOUT", `${arqs.filter((a) => !events.has(a)).length} of ${arqs.length} binds did not resolve within ${Math.round(timeoutMs / 1000)} s`);
          await new Promise<void>((r) => {
            const timer = setTimeout(r, Math.min(left, 1000));
            wake = () => (clearTimeout(timer), r());
          });
        }
        const failed = arqs.map((a) => events.get(a)!).filter((e) => e.status === "FAILED");
        if (failed.length > 0) {
          throw new BindFailed(`${failed.length} of ${arqs.length} accelerators could not be bound: ${failed.map((e) => e.reason ?? "no reason given").join("; ")}`, failed.map((e) => ({ arqUuid: e.tag, reason: e.reason })));
        }
        return arqs.map((a) => attachedAccelerator(events.get(a)!.arq));
      },
    };
  }
}

function instanceUuid(instance: InstanceInfo): string {
  if (typeof instance?.uuid !== "string" || instance.uuid.length === 0) throw new BadRequest("the instance needs its uuid", "instance.uuid");
  return instance.uuid;
}
