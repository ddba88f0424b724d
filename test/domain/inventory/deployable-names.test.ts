/** A host reports only its own deployables: names `<host>_<device>`, whose RP uuid no other host can take. */
import { describe, expect, it } from "vitest";
import { decideReport, hostDecider, type HostCommand } from "../../../src/domain/inventory/decider.js";
import { hostPartOf, ownHostParts } from "../../../src/domain/inventory/deployable-names.js";
import { rpUuidFor } from "../../../src/domain/inventory/ids.js";
import type { DriverDevice } from "../../../src/domain/inventory/report.js";
import { initialHostState } from "../../../src/domain/inventory/state.js";
import { deciderSpec } from "../decider-spec.js";
import { at, deployable, fpga } from "./fixtures.js";

const spec = deciderSpec(hostDecider);
const reportOf = (hostname: string, devices: DriverDevice[]): HostCommand => ({ type: "ReportHostInventory", data: { hostname, devices, at } });
/** One FPGA whose deployable has this name. */
const named = (name: string, bus = "af"): DriverDevice => fpga(bus, { deployables: [{ ...deployable(bus), name }] });
const rpsOf = (hostname: string, devices: DriverDevice[]) =>
  spec.given().when(reportOf(hostname, devices)).events().flatMap((e) => (e.type === "DeployableAdded" ? [e.data.rpUuid] : []));

describe("deployable names belong to the reporting host", () => {
  it("refuses h1's report of h2_FakeDevice, naming the deployable, so h2's provider stays h2's", () => {
    const err = spec.given().when(reportOf("h1", [named("h1_0000:af:00.0"), named("h2_FakeDevice", "b0")])).thenThrows("BAD_USER_INPUT", "devices[1].deployables[0].name", /h2_FakeDevice names host h2, not h1/);
    expect(err.message).toMatch(/h1_<device>/);
    expect(err.details).toEqual({ reason: "NOT_THIS_HOSTS_DEPLOYABLE", hostname: "h1", deployable: "h2_FakeDevice" });
    // The same refusal where the app takes the report (decideReport: the diff with its counts).
    expect(() => decideReport({ type: "ReportHostInventory", data: { hostname: "h1", devices: [named("h2_FakeDevice")], at } }, initialHostState())).toThrow(/names host h2/);
  });

  it("takes the names Cyborg's drivers give: <host>_<BDF>, an Intel region's, and the fake driver's with '.' written '_'", () => {
    const region = { ...deployable("b0"), name: "h1_0000:b0:00.0_region0", parentName: "h1_0000:b0:00.0" };
    const pf = { ...deployable("b0"), name: "h1_0000:b0:00.0", attachHandles: [] };
    expect(rpsOf("h1", [named("h1_0000:af:00.0"), named("h1_FakeDevice", "0c"), fpga("b0", { deployables: [pf, region] })])).toEqual(
      ["h1_0000:af:00.0", "h1_FakeDevice", "h1_0000:b0:00.0", "h1_0000:b0:00.0_region0"].map(rpUuidFor),
    );
    const fqdn = "compute-1.example.org";
    expect(rpsOf(fqdn, [named(`${fqdn}_0000:af:00.0`), named("compute-1_example_org_FakeDevice", "0c")])).toEqual([
      rpUuidFor(`${fqdn}_0000:af:00.0`),
      rpUuidFor("compute-1_example_org_FakeDevice"),
    ]);
  });

  it("ends the host part at the last '_' before the first ':' (no host name has one): h1 cannot report h1_x's deployables", () => {
    expect(["h1_x_0000:af:00.0", "h1_x_0000:af:00.0_region0", "h1_x_FakeDevice", "h1_0000:af:00.0_x_y"].map(hostPartOf)).toEqual(["h1_x", "h1_x", "h1_x", "h1"]);
    for (const name of ["h1_x_FakeDevice", "h1_x_0000:af:00.0"]) {
      spec.given().when(reportOf("h1", [named(name)])).thenThrows("BAD_USER_INPUT", "devices[0].deployables[0].name", /names host h1_x, not h1/);
    }
  });

  it("refuses names that are not <host>_<device>", () => {
    for (const name of ["FakeDevice", "_FakeDevice", "h1_", "h1", "h1.FakeDevice", "0000:af:00.0", "_0000:af:00.0"]) {
      spec.given().when(reportOf("h1", [named(name)])).thenThrows("BAD_USER_INPUT", "devices[0].deployables[0].name", /is not named <host>_<device>|names host/);
    }
  });

  it("refuses the fake driver's spelling of another host: a.b's names are not a-b's or a.b.c's", () => {
    expect(ownHostParts("a.b")).toEqual(["a.b", "a_b"]);
    spec.given().when(reportOf("a-b", [named("a_b_FakeDevice")])).thenThrows("BAD_USER_INPUT", "devices[0].deployables[0].name");
    spec.given().when(reportOf("a.b.c", [named("a_b_FakeDevice")])).thenThrows("BAD_USER_INPUT", "devices[0].deployables[0].name");
  });

  it("refuses deployables from a host whose name has '_' (a.b and a_b would share a_b_FakeDevice), but not its empty report", () => {
    spec.given().when(reportOf("a_b", [named("a_b_FakeDevice")])).thenThrows("BAD_USER_INPUT", "hostname", /"_" in a host name is ambiguous/);
    expect(rpsOf("a.b", [named("a_b_FakeDevice")])).toEqual([rpUuidFor("a_b_FakeDevice")]);
    spec.given().when(reportOf("a_b", [])).thenNothing();
  });

  it("checks parents too: every deployable of a nested tree is the host's", () => {
    const region = { ...deployable("af"), name: "h1_region", attachHandles: [] };
    const fn = { ...deployable("af"), name: "h2_function", parentName: "h1_region" };
    spec.given().when(reportOf("h1", [fpga("af", { deployables: [region, fn] })])).thenThrows("BAD_USER_INPUT", "devices[0].deployables[1].name", /names host h2/);
  });

  it("derives every other id from the host: the same card on two hosts shares no device, deployable, attribute or handle uuid", () => {
    const ids = (hostname: string) =>
      spec.given().when(reportOf(hostname, [named(`${hostname}_0000:af:00.0`)])).events().flatMap((e) => {
        const d = { ...e.data, controlPathUuid: e.type === "DeviceDiscovered" ? e.data.controlPath.uuid : undefined } as Record<string, unknown>;
        return ["deviceUuid", "controlPathUuid", "deployableUuid", "attributeUuid", "handleUuid", "rpUuid"].flatMap((k) => (typeof d[k] === "string" ? [`${k}:${d[k]}`] : []));
      });
    const [h1, h2] = [new Set(ids("h1")), new Set(ids("h2"))];
    expect(["deviceUuid", "controlPathUuid", "deployableUuid", "attributeUuid", "handleUuid", "rpUuid"].map((k) => [...h1].filter((id) => id.startsWith(`${k}:`)).length)).toEqual([1, 1, 1, 2, 1, 1]);
    expect([...h1].filter((id) => h2.has(id))).toEqual([]);
  });
});
