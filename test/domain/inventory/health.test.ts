/**
 * A device's reported health: validated and normalised, recorded only when it tells another story
 * (or crosses a rule's threshold), and part of the report's digest.
 */
import { describe, expect, it } from "vitest";
import { reportDigest } from "../../../src/domain/inventory/digest.js";
import { diffHostReport } from "../../../src/domain/inventory/diff.js";
import { DEFAULT_HEALTH_RULES, parseHealthRules, type HealthRule } from "../../../src/domain/inventory/health-rules.js";
import { HEALTHY, sameHealth, validateHealth, worstStatus, type DeviceHealth } from "../../../src/domain/inventory/health.js";
import { DomainError } from "../../../src/domain/shared/types.js";
import { at, fold, fpga, HOST, report, reported, types } from "./fixtures.js";

const ecc = (count: number): DeviceHealth => ({
  status: "CRITICAL",
  reasons: [{ code: "ECC_VOLATILE_UNCORRECTABLE", message: "volatile uncorrectable ECC errors", count }],
});
const aer = (count: number): DeviceHealth => ({ status: "OK", reasons: [{ code: "AER_CORRECTABLE", message: "correctable PCIe errors (AER)", count }] });
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error("expected a refusal");
};

describe("validateHealth", () => {
  it("normalises: reasons by code then message, a count only where given", () => {
    const h = validateHealth(
      { status: "WARNING", reasons: [{ code: "XID", message: "Xid 94", count: 2 }, { code: "AER_NONFATAL", message: "x", count: null }, { code: "XID", message: "Xid 63" }] },
      "health",
    );
    expect(h).toEqual({
      status: "WARNING",
      reasons: [{ code: "AER_NONFATAL", message: "x" }, { code: "XID", message: "Xid 63" }, { code: "XID", message: "Xid 94", count: 2 }],
    });
  });

  it("reads a missing health as none (the recorded one stays)", () => {
    expect(validateHealth(undefined, "health")).toBeNull();
    expect(validateHealth(null, "health")).toBeNull();
  });

  it.each([
    [{ status: "BROKEN", reasons: [] }, "health.status"],
    [{ status: "OK" }, "health.reasons"],
    [{ status: "OK", reasons: [{ code: "lower", message: "" }] }, "health.reasons[0].code"],
    [{ status: "OK", reasons: [{ code: "XID", message: "x".repeat(256) }] }, "health.reasons[0].message"],
    [{ status: "OK", reasons: [{ code: "XID", message: "", count: -1 }] }, "health.reasons[0].count"],
    [{ status: "OK", reasons: [{ code: "XID", message: "", count: 1.5 }] }, "health.reasons[0].count"],
    [{ status: "OK", reasons: Array.from({ length: 33 }, () => ({ code: "XID", message: "" })) }, "health.reasons"],
  ])("refuses %j at %s", (raw, field) => {
    const err = refusal(() => validateHealth(raw, "health"));
    expect(err.code).toBe("BAD_USER_INPUT");
    expect(err.field).toBe(field);
  });

  it("refuses a bad health in a report with the device's path", () => {
    const err = refusal(() => report(reported(), [fpga("af"), { ...fpga("b0"), health: { status: "NOPE", reasons: [] } }]));
    expect(err.field).toBe("devices[1].health.status");
  });
});

describe("sameHealth and worstStatus", () => {
  it("leaves counts out, and sees status, codes and messages", () => {
    expect(sameHealth(ecc(1), ecc(7))).toBe(true);
    expect(sameHealth(ecc(1), { ...ecc(1), status: "WARNING" })).toBe(false);
    expect(sameHealth(ecc(1), { status: "CRITICAL", reasons: [{ code: "ECC_VOLATILE_UNCORRECTABLE", message: "other" }] })).toBe(false);
    expect(sameHealth(HEALTHY, ecc(1))).toBe(false);
  });

  it("orders CRITICAL > WARNING > UNKNOWN > OK", () => {
    expect(worstStatus("OK", "UNKNOWN")).toBe("UNKNOWN");
    expect(worstStatus("WARNING", "UNKNOWN", "OK")).toBe("WARNING");
    expect(worstStatus("OK", "CRITICAL", "WARNING")).toBe("CRITICAL");
    expect(worstStatus()).toBe("OK");
  });
});

describe("health in the report's diff", () => {
  const deviceOf = (s: ReturnType<typeof reported>) => [...s.devices.values()][0]!;

  it("records a new device's health only when it is not OK", () => {
    expect(types(report(reported(), [{ ...fpga("af"), health: HEALTHY }]).events)).not.toContain("DeviceHealthChanged");
    const events = report(reported(), [{ ...fpga("af"), health: ecc(1) }]).events;
    expect(events.find((e) => e.type === "DeviceHealthChanged")).toMatchObject({ data: { hostname: HOST, health: ecc(1), at } });
    expect(deviceOf(fold(events)).health).toEqual(ecc(1));
  });

  it("writes nothing for the same health again, or a health the report leaves out", () => {
    const s = reported([{ ...fpga("af"), health: ecc(1) }]);
    expect(report(s, [{ ...fpga("af"), health: ecc(1) }]).events).toEqual([]);
    expect(report(s, [fpga("af")]).events).toEqual([]);
    expect(deviceOf(reported([{ ...fpga("af"), health: ecc(1) }], [fpga("af")])).health).toEqual(ecc(1));
  });

  it("writes a change, counted as the device's update", () => {
    const s = reported([{ ...fpga("af"), health: ecc(1) }]);
    const diff = report(s, [{ ...fpga("af"), health: HEALTHY }]);
    expect(types(diff.events)).toEqual(["DeviceHealthChanged", "DeviceUntainted"]);
    expect(diff.summary).toMatchObject({ updated: 1, unchanged: 0 });
    expect(deviceOf(fold(diff.events, s)).health).toEqual(HEALTHY);
  });

  it("lets a count creep without an event, until it crosses a rule's threshold", () => {
    const rules: HealthRule[] = [{ name: "aer-storm", when: { code: "AER_CORRECTABLE", minCount: 100 }, effect: "NoSchedule", key: "k" }];
    const s = fold(diffHostReport(reported(), HOST, [{ ...fpga("af"), health: aer(3) }], at, rules).events);
    expect(diffHostReport(s, HOST, [{ ...fpga("af"), health: aer(99) }], at, rules).events).toEqual([]);
    const crossed = diffHostReport(s, HOST, [{ ...fpga("af"), health: aer(100) }], at, rules).events;
    expect(crossed[0]).toEqual({ type: "DeviceHealthChanged", data: { hostname: HOST, deviceUuid: deviceOf(s).uuid, health: aer(100), at } });
    expect(types(crossed)).toEqual(["DeviceHealthChanged", "DeviceTainted"]);
  });

  it("leaves a stub's health alone (its copy is the last good one)", () => {
    const s = reported([{ ...fpga("af"), health: ecc(1) }]);
    expect(report(s, [{ ...fpga("af"), stub: true, health: HEALTHY }]).events).toEqual([]);
  });
});

describe("the digest", () => {
  it("is what it was before health for a report without one, and changes with health and counts", () => {
    const plain = reportDigest([fpga("af")]);
    expect(reportDigest([{ ...fpga("af"), health: null }])).toBe(plain);
    expect(reportDigest([{ ...fpga("af"), health: HEALTHY }])).not.toBe(plain);
    expect(reportDigest([{ ...fpga("af"), health: aer(3) }])).not.toBe(reportDigest([{ ...fpga("af"), health: aer(4) }]));
  });
});

describe("parseHealthRules", () => {
  it("takes a list or {rules}, with the default taint key", () => {
    const rules = parseHealthRules({ rules: [{ name: "xid", when: { code: "XID", minCount: 3 }, effect: "NoExecute" }] });
    expect(rules).toEqual([{ name: "xid", when: { code: "XID", minCount: 3 }, effect: "NoExecute", key: "cyborg.openstack.org/health" }]);
    expect(parseHealthRules([{ name: "c", when: { status: "CRITICAL" }, effect: "NoSchedule", key: "example.com/x" }])[0]!.key).toBe("example.com/x");
    expect(parseHealthRules(DEFAULT_HEALTH_RULES)).toEqual(DEFAULT_HEALTH_RULES);
  });

  it.each([
    ["x", "rules"],
    [[{ name: "Bad Name", when: { status: "OK" }, effect: "NoSchedule" }], "rules[0].name"],
    [[{ name: "a", when: { status: "OK" }, effect: "Evict" }], "rules[0].effect"],
    [[{ name: "a", when: { status: "OK", code: "XID" }, effect: "NoSchedule" }], "rules[0].when"],
    [[{ name: "a", when: {}, effect: "NoSchedule" }], "rules[0].when"],
    [[{ name: "a", when: { status: "FINE" }, effect: "NoSchedule" }], "rules[0].when.status"],
    [[{ name: "a", when: { status: "OK", minCount: 2 }, effect: "NoSchedule" }], "rules[0].when.minCount"],
    [[{ name: "a", when: { code: "XID", minCount: 0 }, effect: "NoSchedule" }], "rules[0].when.minCount"],
    [[{ name: "a", when: { code: "XID", above: 0 }, effect: "NoSchedule" }], "rules[0].when.above"],
    [[{ name: "a", when: { code: "XID" }, effect: "NoSchedule", key: "has space" }], "rules[0].key"],
    [
      [
        { name: "a", when: { code: "XID" }, effect: "NoSchedule" },
        { name: "a", when: { status: "CRITICAL" }, effect: "NoExecute" },
      ],
      "rules[1].name",
    ],
  ])("refuses %j at %s", (raw, field) => {
    const err = refusal(() => parseHealthRules(raw));
    expect(err.code).toBe("BAD_USER_INPUT");
    expect(err.field).toBe(field);
  });
});

describe("health rules in the report's decision", () => {
  const deviceOf = (s: ReturnType<typeof reported>) => [...s.devices.values()][0]!;
  const reportWith = (s: ReturnType<typeof reported>, health: DeviceHealth, rules: readonly HealthRule[] = DEFAULT_HEALTH_RULES) =>
    diffHostReport(s, HOST, [{ ...fpga("af"), health }], at, rules).events;

  it("taints a CRITICAL device NoExecute by default, in the same decision as the health", () => {
    const events = reportWith(reported([fpga("af")]), ecc(2));
    expect(types(events)).toEqual(["DeviceHealthChanged", "DeviceTainted"]);
    expect(events[1]!.data).toMatchObject({
      taint: {
        key: "cyborg.openstack.org/health",
        value: "CRITICAL",
        effect: "NoExecute",
        by: "health:critical",
        reason: "CRITICAL: volatile uncorrectable ECC errors (2)",
        at,
      },
      status: "MAINTAINING",
    });
  });

  it("moves from one rule's taint to another's, and removes it when the device recovers", () => {
    const sick = fold(reportWith(reported([fpga("af")]), ecc(2)), reported([fpga("af")]));
    const warned = reportWith(sick, { status: "WARNING", reasons: [{ code: "AER_NONFATAL", message: "non-fatal" }] });
    expect(warned.map((e) => [e.type, "taint" in e.data ? e.data.taint.effect : "effect" in e.data ? e.data.effect : null])).toEqual([
      ["DeviceHealthChanged", null],
      ["DeviceUntainted", "NoExecute"],
      ["DeviceTainted", "NoSchedule"],
    ]);
    const healed = reportWith(fold(warned, sick), HEALTHY);
    expect(types(healed)).toEqual(["DeviceHealthChanged", "DeviceUntainted"]);
    expect(healed[1]!.data).toMatchObject({ by: "health:warning", status: "ENABLED" });
    expect(deviceOf(fold(healed, fold(warned, sick))).taints).toEqual([]);
  });

  it("leaves an operator's taint of the same key and effect alone", () => {
    const base = reported([fpga("af")]);
    const operator = { key: "cyborg.openstack.org/health", value: "", effect: "NoExecute" as const, by: "alice", reason: "burn-in", at };
    const tainted = fold([{ type: "DeviceTainted", data: { hostname: HOST, deviceUuid: deviceOf(base).uuid, taint: operator, status: "MAINTAINING", at } }], base);
    expect(types(reportWith(tainted, ecc(1)))).toEqual(["DeviceHealthChanged"]);
    const sick = fold(reportWith(tainted, ecc(1)), tainted);
    expect(types(reportWith(sick, HEALTHY))).toEqual(["DeviceHealthChanged"]);
    expect(deviceOf(fold(reportWith(sick, HEALTHY), sick)).taints).toEqual([operator]);
  });

  it("taints when a count crosses a rule's threshold, and taints nothing for UNKNOWN by default", () => {
    const rules: HealthRule[] = [{ name: "aer-storm", when: { code: "AER_CORRECTABLE", minCount: 100 }, effect: "NoSchedule", key: "example.com/pcie" }];
    const s = fold(reportWith(reported([fpga("af")]), aer(3), rules), reported([fpga("af")]));
    expect(types(reportWith(s, aer(3), rules))).toEqual([]);
    expect(reportWith(s, aer(150), rules)[1]).toMatchObject({ type: "DeviceTainted", data: { taint: { key: "example.com/pcie", by: "health:aer-storm" } } });
    expect(types(reportWith(reported([fpga("af")]), { status: "UNKNOWN", reasons: [{ code: "HEALTH_UNREADABLE", message: "nvidia-smi not found" }] }))).toEqual([
      "DeviceHealthChanged",
    ]);
  });

  it("does not taint again while the health holds, even after an operator removed the taint", () => {
    const sick = fold(reportWith(reported([fpga("af")]), ecc(2)), reported([fpga("af")]));
    const d = deviceOf(sick);
    const untainted = fold(
      [{ type: "DeviceUntainted", data: { hostname: HOST, deviceUuid: d.uuid, key: "cyborg.openstack.org/health", effect: "NoExecute", by: "alice", reason: "known", status: "ENABLED", at } }],
      sick,
    );
    expect(reportWith(untainted, ecc(3))).toEqual([]);
  });
});
