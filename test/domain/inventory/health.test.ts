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
    expect(events.at(-1)).toMatchObject({ type: "DeviceHealthChanged", data: { hostname: HOST, health: ecc(1), at } });
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
    expect(types(diff.events)).toEqual(["DeviceHealthChanged"]);
    expect(diff.summary).toMatchObject({ updated: 1, unchanged: 0 });
    expect(deviceOf(fold(diff.events, s)).health).toEqual(HEALTHY);
  });

  it("lets a count creep without an event, until it crosses a rule's threshold", () => {
    const rules: HealthRule[] = [{ name: "aer-storm", when: { code: "AER_CORRECTABLE", minCount: 100 }, effect: "NoSchedule", key: "k" }];
    const s = fold(diffHostReport(reported(), HOST, [{ ...fpga("af"), health: aer(3) }], at, rules).events);
    expect(diffHostReport(s, HOST, [{ ...fpga("af"), health: aer(99) }], at, rules).events).toEqual([]);
    const crossed = diffHostReport(s, HOST, [{ ...fpga("af"), health: aer(100) }], at, rules).events;
    expect(crossed).toEqual([{ type: "DeviceHealthChanged", data: { hostname: HOST, deviceUuid: deviceOf(s).uuid, health: aer(100), at } }]);
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
