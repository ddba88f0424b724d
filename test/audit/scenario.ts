/**
 * A scripted life of one host, one profile and two ARQs, through GraphQL as clients drive it:
 * report, create, bind, maintain, change, unbind, bind again, lose the device while bound (the
 * binder fails the ARQs), delete by instance (the device is removed), delete and re-create the
 * profile. `after(label)` runs once the service has settled after each step.
 */
import { randomUUID } from "node:crypto";
import type { TestService } from "../api/harness.js";
import * as op from "../api/operations.js";

const PCI = (bus: string, fn: number) => ({ domain: "0000", bus, device: "00", function: String(fn) });

export function hostDevices(o: { withA?: boolean; modelA?: string } = {}) {
  const a = {
    type: "FPGA",
    vendor: "0xABCD",
    model: o.modelA ?? "fake-fpga",
    controlPath: { type: "PCI", info: PCI("0c", 0) },
    deployables: [
      {
        name: "compute1_A",
        numAccelerators: 4,
        driverName: "fake",
        attributes: [
          { key: "rc", value: "FPGA" },
          { key: "trait0", value: "CUSTOM_FAKE_DEVICE" },
        ],
        attachHandles: [1, 2, 3, 4].map((f) => ({ type: "TEST_PCI", info: PCI("0c", f) })),
      },
    ],
  };
  const b = {
    type: "GPU",
    vendor: "10de",
    model: "fake-gpu",
    controlPath: { type: "PCI", info: PCI("0d", 0) },
    deployables: [
      { name: "compute1_B", numAccelerators: 1, driverName: "fake", attributes: [{ key: "rc", value: "PGPU" }], attachHandles: [{ type: "PCI", info: PCI("0d", 0) }] },
    ],
  };
  return o.withA === false ? [b] : [a, b];
}

export interface ScenarioIds {
  host: string;
  profile: string;
  arqs: string[];
  instances: string[];
  /** Device uuids, A then B. */
  devices: string[];
  rpA: string;
}

const settle = async (t: TestService) => {
  for (;;) {
    const head = await t.service.store.headPosition();
    await t.service.projector!.caughtUp();
    await t.service.binder?.idle();
    await new Promise((r) => setTimeout(r, 30));
    if ((await t.service.store.headPosition()) === head) return;
  }
};

async function waitFor(t: TestService, what: string, check: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited 10 s for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `after(label, ids)`: the ids made so far (ARQs and devices appear once created). */
export async function runScenario(t: TestService, after: (label: string, ids: ScenarioIds) => Promise<void>): Promise<ScenarioIds> {
  const ids: ScenarioIds = { host: "compute1", profile: "fpga-1", arqs: [], instances: [randomUUID(), randomUUID()], devices: [], rpA: "" };
  const step = async (label: string) => {
    await settle(t);
    await after(label, ids);
  };
  const profile = { name: ids.profile, description: "one fake FPGA", groups: [{ "resources:FPGA": "1", "trait:CUSTOM_FAKE_DEVICE": "required" }] };
  await t.ok("admin", op.CREATE_PROFILE, { input: profile });
  await step("profile created");

  await t.ok("agent", op.REPORT, { hostname: ids.host, devices: hostDevices() });
  const devices = (await t.ok("admin", `query { devices(filter: { hostname: "compute1" }) { nodes { uuid deployables { rpUuid } } } }`)).devices.nodes;
  ids.devices = devices.map((d: any) => d.uuid);
  ids.rpA = devices[0].deployables[0].rpUuid;
  await step("host reported");

  for (let i = 0; i < 2; i++) ids.arqs.push((await t.ok("service", op.CREATE_ARQS, { name: ids.profile })).createAcceleratorRequests[0].uuid);
  await step("ARQs created");

  const bind = (arqs: string[], instance: string) =>
    t.ok("service", op.BIND, { bindings: arqs.map((arqUuid) => ({ arqUuid, hostname: ids.host, deviceRpUuid: ids.rpA, instanceUuid: instance })) });
  const stateOf = async (uuid: string) => (await t.ok("admin", `query($u: ID!) { acceleratorRequest(uuid: $u) { state } }`, { u: uuid })).acceleratorRequest?.state;
  await bind([ids.arqs[0]!], ids.instances[0]!);
  await waitFor(t, "the first bind", async () => (await stateOf(ids.arqs[0]!)) === "BOUND");
  await step("first ARQ bound");

  await t.ok("admin", op.SET_STATUS, { uuid: ids.devices[1], status: "MAINTAINING" });
  await step("device B in maintenance");

  await t.ok("agent", op.REPORT, { hostname: ids.host, devices: hostDevices({ modelA: "fake-fpga-v2" }) });
  await step("device A changed");

  await t.ok("service", op.UNBIND, { uuids: [ids.arqs[0]] });
  await step("first ARQ unbound");

  await bind(ids.arqs, ids.instances[1]!);
  await waitFor(t, "the second bind", async () => (await Promise.all(ids.arqs.map(stateOf))).every((s) => s === "BOUND"));
  await step("both ARQs bound");

  await t.ok("agent", op.REPORT, { hostname: ids.host, devices: hostDevices({ withA: false }) });
  await waitFor(t, "the binder to fail the ARQs of the lost device", async () => (await Promise.all(ids.arqs.map(stateOf))).every((s) => s === "BIND_FAILED"));
  await step("device A lost");

  await t.ok("service", op.DELETE_ARQS, { instance: ids.instances[1] });
  await step("ARQs deleted, device A removed");

  await t.ok("admin", `mutation($n: [String!]) { deleteDeviceProfiles(names: $n) }`, { n: [ids.profile] });
  await step("profile deleted");

  await t.ok("admin", op.CREATE_PROFILE, { input: { ...profile, description: "one fake FPGA, again" } });
  await step("profile re-created");
  return ids;
}
