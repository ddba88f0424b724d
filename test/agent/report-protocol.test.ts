/** The report protocol with a scripted server: confirm first, the full report only when needed. */
import { describe, expect, it } from "vitest";
import { sendReport, type PostGraphQL } from "../../src/clients/agent/report-protocol.js";
import { reportDigest } from "../../src/domain/inventory/digest.js";
import type { DriverDevice } from "../../src/domain/inventory/report.js";
import { fpga } from "../app/support.js";

const answer = { hostname: "compute1", added: 0, updated: 0, removed: 0, unchanged: 1, revision: 7 };

/** A post that records each call and answers confirm / report with the given functions. */
function server(confirm: () => unknown, report: () => unknown = () => ({ ...answer, added: 1, unchanged: 0 })) {
  const calls: Array<{ op: "confirm" | "report"; variables: Record<string, unknown> }> = [];
  const post = (async (query: string, variables: Record<string, unknown>) => {
    const op = query.includes("confirmHostInventory") ? "confirm" : "report";
    calls.push({ op, variables });
    return op === "confirm" ? { confirmHostInventory: confirm() } : { reportHostInventory: report() };
  }) as PostGraphQL;
  return { post, calls };
}

describe("sendReport", () => {
  const devices = [{ ...fpga("compute1", "af"), driverPrivate: "dropped" } as DriverDevice];

  it("sends only the digest when the server confirms it", async () => {
    const s = server(() => answer);
    expect(await sendReport(s.post, "compute1", devices)).toEqual({ ...answer, confirmed: true });
    expect(s.calls).toEqual([{ op: "confirm", variables: { hostname: "compute1", digest: reportDigest([fpga("compute1", "af")]) } }]);
  });

  it("sends the full report, input fields only, when the server answers null", async () => {
    const s = server(() => null);
    expect(await sendReport(s.post, "compute1", devices)).toMatchObject({ added: 1, confirmed: false });
    expect(s.calls.map((c) => c.op)).toEqual(["confirm", "report"]);
    const sent = s.calls[1]!.variables.devices as Array<Record<string, unknown>>;
    expect(sent[0]).not.toHaveProperty("driverPrivate");
    expect(reportDigest(sent)).toBe(s.calls[0]!.variables.digest);
  });

  it("sends the full report when the confirmation fails (e.g. a server that does not know it)", async () => {
    const s = server(() => {
      throw new Error("GRAPHQL_VALIDATION_FAILED: Cannot query field confirmHostInventory");
    });
    expect(await sendReport(s.post, "compute1", devices)).toMatchObject({ confirmed: false });
    expect(s.calls.map((c) => c.op)).toEqual(["confirm", "report"]);
  });

  it("does not send the full report when the confirmation got no answer or the server is busy: the report fails, to be sent again later", async () => {
    for (const failure of [new Error("no answer within 30 s"), new Error("HTTP 503 UNAVAILABLE: the service is taking 16 host reports"), new Error("connect ECONNREFUSED 127.0.0.1:4000")]) {
      const s = server(() => {
        throw failure;
      });
      await expect(sendReport(s.post, "compute1", devices)).rejects.toBe(failure);
      expect(s.calls.map((c) => c.op)).toEqual(["confirm"]);
    }
  });

  it("sends a report it cannot digest as it is, and lets the server's error through", async () => {
    const s = server(
      () => answer,
      () => {
        throw new Error("BAD_USER_INPUT: unknown device type");
      },
    );
    const bad = [{ ...fpga("compute1", "af"), type: "TPU" } as unknown as DriverDevice];
    await expect(sendReport(s.post, "compute1", bad)).rejects.toThrow(/BAD_USER_INPUT/);
    expect(s.calls.map((c) => c.op)).toEqual(["report"]);
  });

  it("sends the health with the report, and the report without it to a server from before health", async () => {
    const sick = [{ ...fpga("compute1", "af"), health: { status: "WARNING" as const, reasons: [{ code: "AER_NONFATAL", message: "x", count: 2 }] } }];
    let reports = 0;
    const s = server(
      () => null,
      () => {
        if (reports++ === 0) throw new Error('Variable "$devices" got invalid value; Field "health" is not defined by type "DriverDeviceInput".');
        return { ...answer, updated: 1, unchanged: 0 };
      },
    );
    expect(await sendReport(s.post, "compute1", sick)).toMatchObject({ updated: 1, confirmed: false });
    const [first, second] = s.calls.filter((c) => c.op === "report").map((c) => (c.variables.devices as Array<Record<string, unknown>>)[0]!);
    expect(first!.health).toEqual({ status: "WARNING", reasons: [{ code: "AER_NONFATAL", message: "x", count: 2 }] });
    expect(second).not.toHaveProperty("health");
  });

  it("sends the topology with the report, and drops each field a server from before it refuses", async () => {
    const topology = { numaNode: 1, pcieRoot: "0000:00:01.0", pcieSwitch: "0000:01:00.0", linkDomain: null };
    const placed = [{ ...fpga("compute1", "af"), topology, health: { status: "OK" as const, reasons: [] } }];
    let reports = 0;
    const s = server(
      () => null,
      () => {
        reports++;
        if (reports === 1) throw new Error('Variable "$devices" got invalid value; Field "topology" is not defined by type "DriverDeviceInput".');
        if (reports === 2) throw new Error('Variable "$devices" got invalid value; Field "health" is not defined by type "DriverDeviceInput".');
        return { ...answer, updated: 1, unchanged: 0 };
      },
    );
    expect(await sendReport(s.post, "compute1", placed)).toMatchObject({ updated: 1, confirmed: false });
    const sent = s.calls.filter((c) => c.op === "report").map((c) => (c.variables.devices as Array<Record<string, unknown>>)[0]!);
    expect(sent.map((d) => [d.topology !== undefined, d.health !== undefined])).toEqual([[true, true], [false, true], [false, false]]);
    expect(sent[0]!.topology).toEqual(topology);
  });

  it("sends the capacities with the report, and the report without them to a server from before them", async () => {
    const bw = { name: "egress bandwidth", resourceClass: "NET_BW_EGR_KILOBIT_PER_SEC", total: 25_000_000, unit: "kbit/s" };
    const nic = [{ ...fpga("compute1", "af"), capacities: [{ ...bw, driverPrivate: "dropped" }] } as unknown as DriverDevice];
    let reports = 0;
    const s = server(
      () => null,
      () => {
        if (reports++ === 0) throw new Error('Variable "$devices" got invalid value; Field "capacities" is not defined by type "DriverDeviceInput".');
        return { ...answer, updated: 1, unchanged: 0 };
      },
    );
    expect(await sendReport(s.post, "compute1", nic)).toMatchObject({ updated: 1, confirmed: false });
    const [first, second] = s.calls.filter((c) => c.op === "report").map((c) => (c.variables.devices as Array<Record<string, unknown>>)[0]!);
    expect(first!.capacities).toEqual([bw]);
    expect(second).not.toHaveProperty("capacities");
  });
});
