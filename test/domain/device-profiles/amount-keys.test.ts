/**
 * Amounts drawn from a device's capacity (`resources:NET_BW_EGR_KILOBIT_PER_SEC`, custom classes
 * named in `accel:amounts`): validated when the profile is created, counted as no ARQ, and read
 * by the bind as amounts beside the group's one accelerator.
 */
import { describe, expect, it } from "vitest";
import { groupArqCount } from "../../../src/domain/device-profiles/arq-counts.js";
import { validateDeviceProfile } from "../../../src/domain/device-profiles/validation.js";
import { requirementsOf } from "../../../src/domain/inventory/target-fit.js";
import { DomainError } from "../../../src/domain/shared/types.js";

const profile = (groups: Record<string, string>[]) => validateDeviceProfile({ name: "p", groups });
const refusal = (groups: Record<string, string>[]) => {
  try {
    profile(groups);
  } catch (err) {
    return err as DomainError;
  }
  throw new Error("accepted");
};
const VF_WITH_BW = { "resources:SRIOV_NET_VF": "1", "resources:NET_BW_EGR_KILOBIT_PER_SEC": "1000000" };

describe("amount keys", () => {
  it("takes a standard amount class as an amount: no ARQ of its own, drawn beside the VF", () => {
    const g = profile([VF_WITH_BW]).groups[0]!;
    expect(groupArqCount(g)).toBe(1);
    expect(requirementsOf(g)).toMatchObject({ resourceClasses: ["SRIOV_NET_VF"], amounts: [{ resourceClass: "NET_BW_EGR_KILOBIT_PER_SEC", amount: 1_000_000 }] });
  });

  it("takes a custom class named in accel:amounts as an amount, stored normalised", () => {
    const g = profile([{ "resources:CUSTOM_NIC": "2", "resources:CUSTOM_NET_BW_MBPS": "500", "accel:amounts": " custom_net_bw_mbps" }]).groups[0]!;
    expect(g["accel:amounts"]).toBe("CUSTOM_NET_BW_MBPS");
    expect(groupArqCount(g)).toBe(2);
    expect(requirementsOf(g).amounts).toEqual([{ resourceClass: "CUSTOM_NET_BW_MBPS", amount: 500 }]);
    // Without accel:amounts it is a count of accelerators, bounded as any.
    expect(refusal([{ "resources:CUSTOM_NIC": "1", "resources:CUSTOM_NET_BW_MBPS": "5000" }]).message).toMatch(/from 1 to 1000$/);
  });

  it.each([
    [{ "resources:NET_BW_EGR_KILOBIT_PER_SEC": "1000" }, "groups[0]", /exactly one other resources: key/],
    [{ ...VF_WITH_BW, "resources:CUSTOM_NIC": "1" }, "groups[0]", /it has 2/],
    [{ ...VF_WITH_BW, "resources:NET_BW_EGR_KILOBIT_PER_SEC": "0" }, "groups[0].resources:NET_BW_EGR_KILOBIT_PER_SEC", /from 1 to 1000000000 \(an amount/],
    [{ ...VF_WITH_BW, "resources:NET_BW_EGR_KILOBIT_PER_SEC": "2000000000" }, "groups[0].resources:NET_BW_EGR_KILOBIT_PER_SEC", /from 1 to 1000000000/],
    [{ ...VF_WITH_BW, "accel:amounts": "CUSTOM_NET_BW_MBPS" }, "groups[0].accel:amounts", /does not ask for: add resources:CUSTOM_NET_BW_MBPS/],
    [{ ...VF_WITH_BW, "accel:amounts": "NET_BW_EGR_KILOBIT_PER_SEC" }, "groups[0].accel:amounts", /standard amount class/],
    [{ ...VF_WITH_BW, "accel:amounts": "MEMORY" }, "groups[0].accel:amounts", /not a custom resource class/],
    [{ ...VF_WITH_BW, "accel:alternatives": "resources:CUSTOM_NIC=1" }, "groups[0].accel:alternatives", /cannot have accel:alternatives/],
  ])("refuses %o, naming the field and why", (group, field, why) => {
    const err = refusal([group]);
    expect(err.code).toBe("BAD_USER_INPUT");
    expect(err.field).toBe(field);
    expect(err.message).toMatch(why);
  });
});
