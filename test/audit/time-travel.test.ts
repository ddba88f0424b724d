/**
 * Time travel: at every step of a scripted scenario the read models' answers are kept, with the
 * log position and the time they reflect; afterwards the same queries asked `asOf` that position,
 * and `asOf` that time, must give the same answers, field for field (devices with their deployables,
 * handles and the ARQs holding them, profiles, ARQs, an instance's ARQs).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../api/harness.js";
import { runScenario, type ScenarioIds } from "./scenario.js";

const ARQ = `uuid state deviceProfileName deviceProfileGroupId hostname deviceRpUuid instanceUuid projectId
  attachHandleType attachHandleUuid attachHandleInfo revision createdAt updatedAt`;
const DEVICE = `uuid type vendor model hostname status stdBoardInfo vendorBoardInfo controlPath { uuid type info } lost createdAt updatedAt
  deployables { uuid name numAccelerators driverName rpUuid bitstreamId resourceClass traits attributes { uuid key value }
    parent { uuid } root { uuid } children { uuid } device { uuid model }
    attachHandles { uuid type info inUse lost acceleratorRequest { ${ARQ} } } }`;
const PROFILE = `uuid name description groups createdAt updatedAt`;

const SNAPSHOT = `query($host: String!, $devA: ID!, $devB: ID!, $profile: String!, $profileUuid: ID!, $arq0: ID!, $arq1: ID!, $i0: ID!, $i1: ID!, $asOf: String) {
  devices(filter: { hostname: $host }, first: 5, asOf: $asOf) { totalCount pageInfo { hasNextPage } nodes { ${DEVICE} } }
  maintained: devices(filter: { hostname: $host, status: MAINTAINING }, asOf: $asOf) { totalCount nodes { uuid } }
  devA: device(uuid: $devA, asOf: $asOf) { ${DEVICE} }
  devB: device(uuid: $devB, asOf: $asOf) { ${DEVICE} }
  byName: deviceProfile(name: $profile, asOf: $asOf) { ${PROFILE} }
  byUuid: deviceProfile(uuid: $profileUuid, asOf: $asOf) { ${PROFILE} }
  arq0: acceleratorRequest(uuid: $arq0, asOf: $asOf) { ${ARQ} }
  arq1: acceleratorRequest(uuid: $arq1, asOf: $asOf) { ${ARQ} }
  ofI0: acceleratorRequests(filter: { instanceUuid: $i0 }, first: 5, asOf: $asOf) { totalCount nodes { ${ARQ} } }
  ofI1: acceleratorRequests(filter: { instanceUuid: $i1 }, first: 5, asOf: $asOf) { totalCount nodes { ${ARQ} } }
  boundOfI1: acceleratorRequests(filter: { instanceUuid: $i1, state: BOUND }, asOf: $asOf) { totalCount nodes { uuid } }
}`;

interface Snapshot {
  label: string;
  position: string;
  time: string;
  vars: Record<string, string>;
  answer: Record<string, unknown>;
}

describe("time travel agrees with the read models at every step", () => {
  let t: TestService;
  let ids: ScenarioIds;
  const snapshots: Snapshot[] = [];

  beforeAll(async () => {
    t = await startTestService();
    const nobody = randomUUID();
    let profileUuid = nobody;
    ids = await runScenario(t, async (label, known) => {
      if (profileUuid === nobody) profileUuid = (await t.ok("admin", `{ deviceProfile(name: "fpga-1") { uuid } }`)).deviceProfile?.uuid ?? nobody;
      // Ids not made yet: a uuid that names nothing (both answers are null for it).
      const vars = {
        host: known.host,
        devA: known.devices[0] ?? nobody,
        devB: known.devices[1] ?? nobody,
        profile: known.profile,
        profileUuid,
        arq0: known.arqs[0] ?? nobody,
        arq1: known.arqs[1] ?? nobody,
        i0: known.instances[0]!,
        i1: known.instances[1]!,
      };
      const position = String(await t.service.store.headPosition());
      const answer = await t.ok("admin", SNAPSHOT, vars);
      snapshots.push({ label, position, time: new Date().toISOString(), vars, answer });
      // The next step's events are recorded strictly after this snapshot's time.
      await new Promise((r) => setTimeout(r, 5));
    });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  it("the scenario went through every state the queries can show", () => {
    expect(snapshots).toHaveLength(12);
    const at = (label: string) => snapshots.find((s) => s.label === label)!.answer as any;
    expect(at("first ARQ bound").arq0.state).toBe("BOUND");
    expect(at("device B in maintenance").maintained.totalCount).toBe(1);
    expect(at("device A changed").devA.model).toBe("fake-fpga-v2");
    expect(at("device A lost").devA.lost).toBe(true);
    expect(at("device A lost").ofI1.nodes.map((a: any) => a.state)).toEqual(["BIND_FAILED", "BIND_FAILED"]);
    expect(at("ARQs deleted, device A removed").devA).toBeNull();
    expect(at("profile re-created").byName.description).toBe("one fake FPGA, again");
    expect(at("profile re-created").byUuid).toBeNull();
  });

  it("asOf a position gives what the read models said then, at every step", async () => {
    for (const s of snapshots) {
      const past = await t.ok("admin", SNAPSHOT, { ...s.vars, asOf: s.position });
      expect(past, s.label).toEqual(s.answer);
    }
  });

  it("asOf a time gives the same, at every step", async () => {
    for (const s of snapshots) {
      const past = await t.ok("admin", SNAPSHOT, { ...s.vars, asOf: s.time });
      expect(past, s.label).toEqual(s.answer);
    }
  });

  it("says which position it reflects", async () => {
    const s = snapshots[3]!;
    const q = `query($d: ID!, $a: ID!, $asOf: String) { device(uuid: $d, asOf: $asOf) { asOf { position requested } }
      acceleratorRequest(uuid: $a, asOf: $asOf) { asOf { position } } deviceProfile(name: "fpga-1", asOf: $asOf) { asOf { position } } }`;
    const byTime = await t.ok("admin", q, { d: ids.devices[0], a: ids.arqs[0], asOf: s.time });
    expect(byTime.device.asOf).toEqual({ position: s.position, requested: s.time });
    expect(byTime.acceleratorRequest.asOf.position).toBe(s.position);
    expect(byTime.deviceProfile.asOf.position).toBe(s.position);
    // Live answers are not from the past.
    expect((await t.ok("admin", q, { d: ids.devices[1], a: ids.arqs[0] })).device.asOf).toBeNull();
    // Before the first event nothing existed; past the head is the head.
    const before = await t.ok("admin", q, { d: ids.devices[1], a: ids.arqs[0], asOf: "2000-01-01T00:00:00Z" });
    expect(before).toEqual({ device: null, acceleratorRequest: null, deviceProfile: null });
    const future = await t.ok("admin", q, { d: ids.devices[1], a: ids.arqs[0], asOf: "999999999" });
    expect(future.device.asOf.position).toBe(snapshots.at(-1)!.position);
  });

  it("pages a past list with its own cursors", async () => {
    const s = snapshots.find((x) => x.label === "both ARQs bound")!;
    const q = `query($i: ID!, $asOf: String, $after: String) { acceleratorRequests(filter: { instanceUuid: $i }, first: 1, after: $after, asOf: $asOf) {
      totalCount pageInfo { hasNextPage endCursor } nodes { uuid } } }`;
    const p1 = (await t.ok("admin", q, { i: ids.instances[1], asOf: s.position })).acceleratorRequests;
    const p2 = (await t.ok("admin", q, { i: ids.instances[1], asOf: s.position, after: p1.pageInfo.endCursor })).acceleratorRequests;
    expect([...p1.nodes, ...p2.nodes].map((a: any) => a.uuid)).toEqual(ids.arqs);
    expect([p1.pageInfo.hasNextPage, p2.pageInfo.hasNextPage, p1.totalCount]).toEqual([true, false, 2]);
  });

  it("refuses bad input with a code and a message to act on, and is for audit:read only", async () => {
    const q = `query($asOf: String) { devices(asOf: $asOf) { totalCount } }`;
    const noHost = await t.gql("admin", q, { asOf: "1" });
    expect(noHost.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT", field: "filter.hostname" } });
    const bad = await t.gql("admin", `{ device(uuid: "${ids.devices[0]}", asOf: "yesterday") { uuid } }`);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "asOf" });
    expect(bad.errors?.[0]?.message).toMatch(/log position .* or an ISO-8601 time/);
    const noInstance = await t.gql("admin", `{ acceleratorRequests(asOf: "3") { totalCount } }`);
    expect(noInstance.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", field: "filter.instanceUuid" });
    for (const who of ["manager", "service"] as const) {
      const r = await t.gql(who, `{ acceleratorRequest(uuid: "${ids.arqs[0]}", asOf: "3") { uuid } }`);
      expect(r.errors?.[0]?.extensions?.code, who).toBe("FORBIDDEN");
    }
  });
});
