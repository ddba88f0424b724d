/**
 * Scarcity under contention: a host with 16 devices of one attach handle each, and N ARQs bound
 * at once, each to its own instance, spread over the 16 resource providers. Exactly 16 may end
 * BOUND, each on its own handle; every other bind ends BIND_FAILED with a reason, or is refused
 * at once with a typed error.
 */
import { randomUUID } from "node:crypto";
import { allArqs, waitForBindsToResolve } from "./kill9-rounds.js";
import { gql, GqlError } from "./wire.js";

export const RACE_HANDLES = 16;

export interface RaceResult {
  binds: number;
  bound: number;
  failedWithReason: number;
  failedWithoutReason: number;
  /** Binds refused at once, by error code (NO_ANSWER when the request itself failed). */
  refused: Record<string, number>;
  /** ARQs left INITIAL: as many as the refused binds, when refusals write nothing. */
  untouched: number;
  /** Any other state an ARQ shows (state: count). */
  other: Record<string, number>;
  handlesHeldTwice: number;
  stuckBindStarted: number;
}

/** 16 devices of one TEST_PCI handle each: 16 resource providers, one handle each. */
function sixteenDevices(hostname: string) {
  return Array.from({ length: RACE_HANDLES }, (_, i) => ({
    type: "FPGA",
    vendor: "0xABCD",
    model: "race",
    controlPath: { type: "PCI", info: { domain: "0000", bus: (0x10 + i).toString(16), device: "00", function: "0" } },
    deployables: [
      {
        name: `${hostname}_dev${i}`,
        numAccelerators: 1,
        driverName: "fake",
        attributes: [{ key: "rc", value: "FPGA" }, { key: "trait0", value: "CUSTOM_FAKE_DEVICE" }],
        attachHandles: [{ type: "TEST_PCI", info: { domain: "0000", bus: (0x10 + i).toString(16), device: "00", function: "1" } }],
      },
    ],
  }));
}

export async function bindRace(url: string, binds: number, bindTimeoutS: number): Promise<RaceResult> {
  const hostname = `race-${randomUUID().slice(0, 8)}`;
  const profile = `${hostname}-x100`;
  await gql(url, "admin", `mutation($h: String!, $d: [DriverDeviceInput!]!) { reportHostInventory(hostname: $h, devices: $d) { revision } }`, { h: hostname, d: sixteenDevices(hostname) });
  await gql(url, "admin", `mutation($p: DeviceProfileInput!) { createDeviceProfile(input: $p) { uuid } }`, { p: { name: profile, groups: [{ "resources:FPGA": "100" }] } });
  const rps = ((await gql(url, "admin", `query($h: String) { resourceProviders(hostname: $h) { uuid } }`, { h: hostname })).resourceProviders as Array<{ uuid: string }>).map((r) => r.uuid);
  if (rps.length !== RACE_HANDLES) throw new Error(`expected ${RACE_HANDLES} resource providers on ${hostname}, got ${rps.length}`);

  const arqs: string[] = [];
  while (arqs.length < binds) {
    const made = (await gql(url, "service", `mutation($n: String!) { createAcceleratorRequests(deviceProfileName: $n) { uuid } }`, { n: profile })).createAcceleratorRequests;
    arqs.push(...made.map((a: { uuid: string }) => a.uuid));
  }
  arqs.length = binds;
  const mine = new Set(arqs);

  const refused: Record<string, number> = {};
  const started = Date.now();
  await Promise.all(
    arqs.map(async (arqUuid, i) => {
      try {
        await gql(url, "service", `mutation($b: [ArqBindingInput!]!) { bindAcceleratorRequests(bindings: $b) { uuid state } }`, {
          b: [{ arqUuid, hostname, deviceRpUuid: rps[i % RACE_HANDLES], instanceUuid: randomUUID() }],
        });
      } catch (err) {
        const code = err instanceof GqlError ? err.code : `NO_ANSWER: ${(err as Error).message}`;
        refused[code] = (refused[code] ?? 0) + 1;
      }
    }),
  );
  const stuck = (await waitForBindsToResolve(url, bindTimeoutS, started)).filter((a) => mine.has(a.uuid));

  const rows = (await allArqs(url)).filter((a) => mine.has(a.uuid));
  const reasons = await failureReasons(url, mine);
  const result: RaceResult = { binds, bound: 0, failedWithReason: 0, failedWithoutReason: 0, refused, untouched: 0, other: {}, handlesHeldTwice: 0, stuckBindStarted: stuck.length };
  const handles = new Map<string, number>();
  for (const a of rows) {
    if (a.state === "BOUND") {
      result.bound++;
      handles.set(a.attachHandleUuid!, (handles.get(a.attachHandleUuid!) ?? 0) + 1);
    } else if (a.state === "BIND_FAILED") {
      if (reasons.get(a.uuid)) result.failedWithReason++;
      else result.failedWithoutReason++;
    } else if (a.state === "INITIAL") result.untouched++;
    else result.other[a.state] = (result.other[a.state] ?? 0) + 1;
  }
  result.handlesHeldTwice = [...handles.values()].filter((n) => n > 1).length;
  return result;
}

/** The reason of each ARQ's last ArqBindFailed event, from the global log. */
async function failureReasons(url: string, arqs: Set<string>): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  let after: string | null = null;
  for (;;) {
    const page: any = await gql(url, "admin", `query($a: String) { events(types: ["ArqBindFailed"], first: 1000, after: $a) { pageInfo { hasNextPage endCursor } nodes { data } } }`, { a: after });
    for (const e of page.events.nodes) if (arqs.has(e.data.arqUuid)) reasons.set(e.data.arqUuid, e.data.reason);
    if (!page.events.pageInfo.hasNextPage) return reasons;
    after = page.events.pageInfo.endCursor;
  }
}
