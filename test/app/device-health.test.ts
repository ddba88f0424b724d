/**
 * Device health through the application: the configured health rules decide the taint in the
 * report's own append, and a host whose health holds is confirmed by digest without a write.
 */
import { describe, expect, it } from "vitest";
import { Application } from "../../src/app/application.js";
import { reportDigest } from "../../src/domain/inventory/digest.js";
import type { HealthRule } from "../../src/domain/inventory/health-rules.js";
import { stream } from "../../src/domain/shared/types.js";
import { MemoryEventStore } from "../../src/infra/eventstore/memory.js";
import { ADMIN, fpga, hostState, types } from "./support.js";

const agent = { ...ADMIN, principal: "agent:compute1", isAdmin: false };
const xid = (count: number) => [{ ...fpga("compute1", "af"), health: { status: "OK" as const, reasons: [{ code: "XID", message: "Xid 94: contained ECC error", count }] } }];

describe("device health (application)", () => {
  const rules: HealthRule[] = [{ name: "xid-storm", when: { code: "XID", minCount: 3 }, effect: "NoSchedule", key: "example.com/xid" }];

  it("applies the application's health rules in the report's append, and confirms a health that holds", async () => {
    const store = new MemoryEventStore();
    const app = new Application({ store, healthRules: rules });
    await app.reportHostInventory(agent, "compute1", xid(1));
    expect(await types(store, stream.host("compute1"))).toContain("DeviceHealthChanged");
    const before = (await store.readStream(stream.host("compute1"))).length;

    // A count that creeps below the threshold: no event, and the digest of the new report confirms.
    expect(await app.reportHostInventory(agent, "compute1", xid(2))).toMatchObject({ updated: 0, unchanged: 1 });
    expect((await store.readStream(stream.host("compute1"))).length).toBe(before);
    expect(await app.confirmHostInventory("compute1", reportDigest(xid(2)))).toMatchObject({ unchanged: 1 });

    // Crossing it: the health and the rule's taint in one append.
    const crossed = await app.reportHostInventory(agent, "compute1", xid(3));
    expect(crossed).toMatchObject({ updated: 1 });
    const all = await store.readStream(stream.host("compute1"));
    expect(all.slice(before).map((e) => e.type)).toEqual(["DeviceHealthChanged", "DeviceTainted", "HostReportSettled"]);
    const [device] = (await hostState(store, "compute1")).devices.values();
    expect(device!.taints).toMatchObject([{ key: "example.com/xid", effect: "NoSchedule", by: "health:xid-storm" }]);
    expect(await app.confirmHostInventory("compute1", reportDigest(xid(2)))).toBeNull();
  });

  it("uses the default rules when none are given: an OK health with reasons taints nothing", async () => {
    const store = new MemoryEventStore();
    await new Application({ store }).reportHostInventory(agent, "compute1", xid(5));
    expect(await types(store, stream.host("compute1"))).not.toContain("DeviceTainted");
  });
});
