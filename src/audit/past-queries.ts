/**
 * The queries an auditor asks of the past (`asOf` on device, devices, deviceProfile,
 * acceleratorRequest, acceleratorRequests): each folds the owning streams up to the point with
 * time travel and answers in the read models' shapes, with the point it reflects (`asOf`).
 *
 * Which streams: a device's host comes from the audit read model (the first event that named the
 * device), an instance's ARQs too (every ARQ stream that named the instance up to the point); a
 * profile is its own stream, found by name or through its uuid claim.
 */
import { objectRefsUpTo } from "../../projections/audit/queries.js";
import type { ArqFilter } from "../../projections/arqs/queries.js";
import type { DeviceFilter } from "../../projections/device-tree/queries.js";
import type { Page } from "../../projections/shared/page.js";
import { aggregates } from "../app/streams.js";
import { liveArq } from "../domain/arqs/decider.js";
import { arqView, type ArqView } from "../domain/arqs/view.js";
import { deviceProfileView, type DeviceProfileView } from "../domain/device-profiles/view.js";
import { DomainError } from "../domain/shared/types.js";
import type { EventStore } from "../infra/eventstore/port.js";
import type { ReadStore } from "../infra/readstore/port.js";
import { decodeCursor, encodeCursor } from "../infra/readstore/keys-and-cursors.js";
import { asOfView, deviceView, devicesOf, type AsOfView, type PastDevice } from "./past-views.js";
import { timeTravelFor, type PointInTime, type TimeTravel } from "./time-travel.js";

export type PastArq = ArqView & { asOf: AsOfView };
export type PastProfile = DeviceProfileView & { asOf: AsOfView };

/** How many entries of an object's history are searched for the streams it lived in. */
const REF_LIMIT = 10_000;

export class PastQueries {
  private readonly tt: TimeTravel;

  constructor(
    private readonly store: EventStore,
    private readonly readStore: ReadStore,
  ) {
    this.tt = timeTravelFor(store);
  }

  at(asOf: string): Promise<PointInTime> {
    return this.tt.at(asOf);
  }

  async device(uuid: string, asOf: string): Promise<PastDevice | null> {
    const point = await this.at(asOf);
    const [first] = await objectRefsUpTo(this.readStore, uuid, point.position, 1);
    if (!first?.stream.startsWith("host-")) return null;
    const past = await this.host(first.stream.slice("host-".length), point);
    const node = past.host.devices.get(uuid);
    return node ? deviceView(past, node) : null;
  }

  /** A host's devices then, in discovery order; filters as the read model applies them. */
  async devices(filter: DeviceFilter, first: number, after: string | undefined, asOf: string): Promise<Page<PastDevice>> {
    if (!filter.hostname) throw new DomainError("BAD_USER_INPUT", "asOf needs filter.hostname: time travel folds one host's stream", "filter.hostname");
    const past = await this.host(filter.hostname, await this.at(asOf));
    const all = devicesOf(past).filter((d) => (!filter.type || d.type === filter.type) && (!filter.vendor || d.vendor === filter.vendor) && (!filter.status || d.status === filter.status));
    return pageOfList(all, first, after);
  }

  async deviceProfile(by: { uuid?: string | null; name?: string | null }, asOf: string): Promise<PastProfile | null> {
    const point = await this.at(asOf);
    let name = by.name ?? null;
    if (by.uuid) name = (await this.tt.fold(aggregates.profileUuid, by.uuid.toLowerCase(), point.position)).state.holder;
    if (!name) return null;
    const { state } = await this.tt.fold(aggregates.profile, name, point.position);
    if (state.status !== "active" || (by.uuid && state.profile.uuid !== by.uuid.toLowerCase())) return null;
    return { ...deviceProfileView(state.profile), asOf: asOfView(point) };
  }

  async arq(uuid: string, asOf: string | PointInTime): Promise<PastArq | null> {
    const point = typeof asOf === "string" ? await this.at(asOf) : asOf;
    const loaded = await this.tt.fold(aggregates.arq, uuid, point.position);
    const arq = liveArq(loaded.state);
    return arq ? { ...arqView(arq, loaded.revision, loaded.position!), asOf: asOfView(point) } : null;
  }

  /** An instance's ARQs then, in creation order; other filters as the read model applies them. */
  async arqs(filter: ArqFilter, first: number, after: string | undefined, asOf: string): Promise<Page<PastArq>> {
    const instance = filter.instanceUuid;
    if (!instance) throw new DomainError("BAD_USER_INPUT", "asOf needs filter.instanceUuid: time travel folds that instance's ARQs", "filter.instanceUuid");
    const point = await this.at(asOf);
    const refs = await objectRefsUpTo(this.readStore, instance, point.position, REF_LIMIT);
    const uuids = [...new Set(refs.filter((r) => r.stream.startsWith("arq-")).map((r) => r.stream.slice("arq-".length)))];
    const found = await Promise.all(uuids.map(async (u) => ({ arq: await this.arq(u, point), created: await this.createdAt(u) })));
    const matching = found.filter((f): f is { arq: PastArq; created: bigint } => f.arq !== null && matches(f.arq, filter));
    matching.sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0));
    return pageOfList(
      matching.map((m) => m.arq),
      first,
      after,
    );
  }

  private async host(hostname: string, point: PointInTime) {
    return { point, host: (await this.tt.fold(aggregates.host, hostname, point.position)).state };
  }

  /** The position of the ARQ's creation: the read model lists ARQs in that order. */
  private async createdAt(arqUuid: string): Promise<bigint> {
    const [created] = await this.store.readStream(aggregates.arq.streamName(arqUuid), { maxCount: 1 });
    return created?.position ?? 0n;
  }
}

/** The read model's ARQ filter (projections/arqs/queries.ts), on one ARQ. */
function matches(a: ArqView, f: ArqFilter): boolean {
  return (
    a.instanceUuid === f.instanceUuid &&
    (!f.state || a.state === f.state) &&
    (!f.hostname || a.hostname === f.hostname) &&
    (!f.deviceProfileName || a.deviceProfileName === f.deviceProfileName) &&
    (!f.resolvedOnly || a.state === "BOUND" || a.state === "BIND_FAILED")
  );
}

/** A page of a list computed whole; cursors are the items' indexes. */
function pageOfList<T>(all: readonly T[], first: number, after: string | undefined): Page<T> {
  let start = 0;
  if (after !== undefined) {
    const { score, member } = decodeCursor(after);
    if (member !== "asof") throw new DomainError("BAD_USER_INPUT", "after is not a cursor of this list (asked with asOf)", "after");
    start = score + 1;
  }
  const items = all.slice(start, start + first);
  return { items, cursors: items.map((_, i) => encodeCursor(start + i, "asof")), hasNextPage: start + first < all.length, totalCount: all.length };
}
