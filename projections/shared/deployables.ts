/**
 * Deployable docs and their attributes, as device-tree, deployables and resource-providers each
 * keep them under their own keys (each projection owns its data, so each can be rebuilt alone):
 *   <p>:deployable:<uuid>     hash  uuid name numAccelerators driverName rpUuid bitstreamId
 *                                   parentUuid rootUuid deviceUuid hostname createdAt updatedAt
 *   <p>:attrs:<deployable>    hash  attribute uuid -> {key, value}
 *   <p>:attr-order:<dep>      zset  attribute uuids by the position that first set them
 */
import type { InventoryEvent } from "../../src/domain/events.js";
import type { Recorded } from "../../src/infra/eventstore/port.js";
import type { Doc, ReadStore, Write } from "../../src/infra/readstore/port.js";
import { score } from "./keys.js";

type KeyFn = (...parts: string[]) => string;

/** parentUuid: the attribute it is nested under (parent_attribute_id), null at the top. */
export type AttributeView = { uuid: string; key: string; value: string; parentUuid: string | null };

export type DeployableView = {
  uuid: string;
  name: string;
  numAccelerators: number;
  driverName: string | null;
  rpUuid: string;
  bitstreamId: string | null;
  parentUuid: string | null;
  rootUuid: string;
  deviceUuid: string;
  hostname: string;
  createdAt: string;
  updatedAt: string | null;
  /** In the order they were first set. */
  attributes: AttributeView[];
  /** The value of the `rc` attribute (Placement resource class). */
  resourceClass: string | null;
  /** Values of the attributes whose key starts with `trait`, in attribute order. */
  traits: string[];
};

export const DEPLOYABLE_EVENTS = ["DeployableAdded", "DeployableChanged", "DeployableRemoved", "AttributeSet", "AttributeRemoved"] as const;

/** Writes for the deployable doc and its attributes; [] for other events. */
export function deployableWrites(k: KeyFn, event: Recorded<InventoryEvent>): Write[] {
  switch (event.type) {
    case "DeployableAdded": {
      const d = event.data;
      return [
        {
          op: "put",
          key: k("deployable", d.deployableUuid),
          fields: {
            uuid: d.deployableUuid,
            name: d.name,
            numAccelerators: d.numAccelerators,
            driverName: d.driverName,
            rpUuid: d.rpUuid,
            bitstreamId: d.bitstreamId,
            parentUuid: d.parentUuid,
            rootUuid: d.rootUuid,
            deviceUuid: d.deviceUuid,
            hostname: d.hostname,
            createdAt: d.at,
            updatedAt: null,
          },
        },
      ];
    }
    case "DeployableChanged":
      return [{ op: "put", key: k("deployable", event.data.deployableUuid), fields: { ...event.data.changes, updatedAt: event.data.at } }];
    case "DeployableRemoved": {
      const u = event.data.deployableUuid;
      return [
        { op: "del", key: k("deployable", u) },
        { op: "del", key: k("attrs", u) },
        { op: "del", key: k("attr-order", u) },
      ];
    }
    case "AttributeSet":
    case "AttributeRemoved":
      return attributeWrites(k, event);
    default:
      return [];
  }
}

/** Writes for a deployable's attributes (AttributeSet, AttributeRemoved); [] for other events. */
export function attributeWrites(k: KeyFn, event: Recorded<InventoryEvent>): Write[] {
  switch (event.type) {
    case "AttributeSet": {
      const d = event.data;
      return [
        { op: "put", key: k("attrs", d.deployableUuid), fields: { [d.attributeUuid]: { key: d.key, value: d.value, parentUuid: d.parentAttributeUuid ?? null } } },
        // NX: a changed value keeps the attribute's place.
        { op: "zadd", key: k("attr-order", d.deployableUuid), member: d.attributeUuid, score: score(event.position), nx: true },
      ];
    }
    case "AttributeRemoved": {
      const d = event.data;
      return [
        { op: "unset", key: k("attrs", d.deployableUuid), fields: [d.attributeUuid] },
        { op: "zrem", key: k("attr-order", d.deployableUuid), member: d.attributeUuid },
      ];
    }
    default:
      return [];
  }
}

type AttributeFields = Pick<DeployableView, "attributes" | "resourceClass" | "traits">;

/** A deployable's attributes as its view shows them (the read models', and time travel's from the host's state). */
export function attributeFields(attributes: AttributeView[]): AttributeFields {
  let resourceClass: string | null = null;
  const traits: string[] = [];
  for (const a of attributes) {
    if (a.key === "rc") resourceClass = a.value;
    else if (a.key.startsWith("trait")) traits.push(a.value);
  }
  return { attributes, resourceClass, traits };
}

export function attributesView(attrs: Doc | null, order: readonly string[]): AttributeFields {
  const attributes: AttributeView[] = [];
  for (const uuid of order) {
    const a = attrs?.[uuid] as { key: string; value: string; parentUuid?: string | null } | undefined;
    if (a) attributes.push({ uuid, key: a.key, value: a.value, parentUuid: a.parentUuid ?? null });
  }
  return attributeFields(attributes);
}

/** Deployables with their attributes, by uuid: one round trip (three pipelined reads). */
export async function readDeployables(store: ReadStore, k: KeyFn, uuids: readonly string[]): Promise<Array<DeployableView | null>> {
  if (uuids.length === 0) return [];
  const [docs, attrs, orders] = await Promise.all([
    store.getDocs(uuids.map((u) => k("deployable", u))),
    store.getDocs(uuids.map((u) => k("attrs", u))),
    store.getMembers(uuids.map((u) => k("attr-order", u))),
  ]);
  return docs.map((doc, i) =>
    doc ? ({ ...(doc as Omit<DeployableView, keyof ReturnType<typeof attributesView>>), ...attributesView(attrs[i]!, orders[i]!) } as DeployableView) : null,
  );
}

/** Groups the members of per-parent indexes into hydrated children, keeping each index's order. */
export async function childrenOf<T>(
  store: ReadStore,
  indexKeys: readonly string[],
  load: (uuids: readonly string[]) => Promise<Array<T | null>>,
): Promise<T[][]> {
  const members = await store.getMembers(indexKeys);
  const unique = [...new Set(members.flat())];
  const loaded = await load(unique);
  const byUuid = new Map<string, T>();
  unique.forEach((u, i) => loaded[i] && byUuid.set(u, loaded[i]!));
  return members.map((list) => list.flatMap((u) => (byUuid.has(u) ? [byUuid.get(u)!] : [])));
}
