/**
 * Device health as the agent reads it, from fixtures in the vendors' documented formats
 * (test/fixtures/gpu-health): nvidia-smi -q -x in both ECC layouts, the kernel log's XID lines,
 * sysfs AER counters, QAT's state. Tolerant: a source that cannot be read is UNKNOWN with a reason.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { aerHealth, parseAerCounters } from "../../../src/clients/agent/drivers/health/aer.js";
import { withHealth } from "../../../src/clients/agent/drivers/health/index.js";
import { parseNvidiaSmi } from "../../../src/clients/agent/drivers/health/nvidia-smi.js";
import { combineHealth } from "../../../src/clients/agent/drivers/health/part.js";
import { qatHealth } from "../../../src/clients/agent/drivers/health/qat.js";
import { parseXids, xidHealth } from "../../../src/clients/agent/drivers/health/xid.js";
import { fakeDriver } from "../../../src/clients/agent/drivers/fake.js";
import { nvidiaGpuDriver } from "../../../src/clients/agent/drivers/nvidia-gpu.js";
import { validateHealth } from "../../../src/domain/inventory/health.js";
import { FIXTURES, fixtureEnv } from "./fixture-env.js";

const fixture = (name: string) => readFile(`${FIXTURES}gpu-health/${name}`, "utf8");
const SYS = `${FIXTURES}gpu-health/sys`;

describe("nvidia-smi -q -x", () => {
  it("reads R555's layout: uncorrectable DRAM and SRAM ECC, pending row remapping, and the GPU it cannot reach", async () => {
    const gpus = parseNvidiaSmi(await fixture("nvidia-smi-r555.xml"));
    expect([...gpus.keys()]).toEqual(["0000:3b:00.0", "0000:af:00.0", "0000:86:00.0"]);
    expect(gpus.get("0000:3b:00.0")).toEqual({ status: "OK", reasons: [] });
    expect(gpus.get("0000:af:00.0")).toEqual({
      status: "CRITICAL",
      reasons: [
        { code: "ECC_VOLATILE_UNCORRECTABLE", message: "uncorrectable ECC errors since the driver loaded", count: 2 },
        { code: "ECC_AGGREGATE_UNCORRECTABLE", message: "uncorrectable ECC errors over the GPU's life", count: 6 },
        { code: "ROW_REMAP_PENDING", message: "rows are pending remapping: reset the GPU to remap them" },
      ],
    });
    expect(gpus.get("0000:86:00.0")).toEqual({
      status: "CRITICAL",
      reasons: [{ code: "GPU_LOST", message: "nvidia-smi cannot reach the GPU: GPU is lost.  Reboot the system to recover this GPU" }],
    });
  });

  it("reads the older layout: double-bit totals and pages pending retirement", async () => {
    const gpus = parseNvidiaSmi(await fixture("nvidia-smi-r470.xml"));
    expect(gpus.get("0000:3b:00.0")).toEqual({
      status: "WARNING",
      reasons: [
        { code: "ECC_AGGREGATE_UNCORRECTABLE", message: "uncorrectable ECC errors over the GPU's life", count: 3 },
        { code: "RETIRED_PAGES_PENDING", message: "memory pages are pending retirement: reset the GPU to retire them" },
      ],
    });
  });

  it("names a row remapping failure, and reads nothing into garbage", () => {
    const xml = `<gpu id="00000000:01:00.0"><remapped_rows><remapped_row_pending>No</remapped_row_pending><remapped_row_failure>Yes</remapped_row_failure></remapped_rows></gpu>`;
    expect(parseNvidiaSmi(xml).get("0000:01:00.0")).toMatchObject({ status: "CRITICAL", reasons: [{ code: "ROW_REMAP_FAILURE" }] });
    expect(parseNvidiaSmi("No devices were found").size).toBe(0);
    expect(parseNvidiaSmi('<gpu id="not-a-bus-id"></gpu>').size).toBe(0);
  });
});

describe("XID events from the kernel log", () => {
  it("counts each GPU's XIDs and reports the hardware ones, not a program's own faults", async () => {
    const xids = parseXids(await fixture("dmesg.txt"));
    expect(xids.get("0000:3b:00")).toEqual(new Map([[13, 1]]));
    expect(xidHealth(xids.get("0000:3b:00"))).toEqual({ status: "OK", reasons: [] });
    expect(xidHealth(xids.get("0000:af:00"))).toEqual({
      status: "WARNING",
      reasons: [
        { code: "XID", message: "Xid 63: ECC page retirement or row remapping recorded", count: 1 },
        { code: "XID", message: "Xid 94: contained ECC error", count: 2 },
      ],
    });
    expect(xidHealth(xids.get("0000:86:00"))).toEqual({ status: "CRITICAL", reasons: [{ code: "XID", message: "Xid 79: GPU has fallen off the bus", count: 1 }] });
  });
});

describe("AER counters from sysfs", () => {
  it("parses the kernel's `<name> <count>` lines with their TOTAL_ line", () => {
    expect(parseAerCounters("RxErr 1\nBadTLP 2\nTOTAL_ERR_COR 3\n", "TOTAL_ERR_COR")).toEqual({ total: 3, counts: { RxErr: 1, BadTLP: 2 } });
    expect(parseAerCounters("RxErr 1\nBadTLP 2\n", "TOTAL_ERR_COR")).toEqual({ total: 3, counts: { RxErr: 1, BadTLP: 2 } });
    expect(parseAerCounters("garbage", "TOTAL_ERR_COR")).toBeNull();
  });

  it("reports correctable errors without raising the status, and a fatal one as CRITICAL", async () => {
    expect(await aerHealth(`${SYS}/bus/pci/devices/0000:af:00.0`)).toEqual({
      status: "OK",
      reasons: [{ code: "AER_CORRECTABLE", message: "correctable PCIe errors (AER): BadTLP, BadDLLP", count: 4 }],
    });
    expect(await aerHealth(`${SYS}/bus/pci/devices/0000:86:00.0`)).toEqual({
      status: "CRITICAL",
      reasons: [{ code: "AER_FATAL", message: "fatal uncorrectable PCIe errors (AER): SDES", count: 1 }],
    });
  });

  it("says nothing for a device without AER files, and UNKNOWN for a file it cannot make out", async () => {
    expect(await aerHealth(`${SYS}/bus/pci/devices/0000:3b:00.0`)).toEqual({ status: "OK", reasons: [] });
    const dir = mkdtempSync(join(tmpdir(), "aer-"));
    writeFileSync(join(dir, "aer_dev_fatal"), "not counters\n");
    expect(await aerHealth(dir)).toMatchObject({ status: "UNKNOWN", reasons: [{ code: "HEALTH_UNREADABLE" }] });
  });
});

describe("QAT state", () => {
  it("is CRITICAL when down, nothing when up or not exposed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "qat-"));
    expect(await qatHealth(dir)).toEqual({ status: "OK", reasons: [] });
    mkdirSync(join(dir, "qat"));
    writeFileSync(join(dir, "qat", "state"), "up\n");
    expect(await qatHealth(dir)).toEqual({ status: "OK", reasons: [] });
    writeFileSync(join(dir, "qat", "state"), "down\n");
    expect(await qatHealth(dir)).toMatchObject({ status: "CRITICAL", reasons: [{ code: "QAT_DOWN" }] });
  });
});

describe("withHealth: each discovered device's health", () => {
  const gpusOfMixedHost = () => nvidiaGpuDriver.discover(fixtureEnv("mixed-host"));

  it("combines AER, nvidia-smi and XIDs per GPU, in the shape the service takes", async () => {
    const env = fixtureEnv("mixed-host", { sysfsRoot: SYS, health: { nvidiaSmi: () => fixture("nvidia-smi-r555.xml"), kernelLog: () => fixture("dmesg.txt") } });
    const devices = await withHealth(await gpusOfMixedHost(), env);
    const health = new Map(devices.map((d) => [d.deployables[0]!.name.slice("compute1_".length), d.health!]));
    expect(health.get("0000:3b:00.0")).toEqual({ status: "OK", reasons: [] });
    expect(health.get("0000:86:00.0")!.status).toBe("CRITICAL");
    expect(health.get("0000:86:00.0")!.reasons.map((r) => r.code)).toEqual(["AER_FATAL", "GPU_LOST", "XID"]);
    expect(health.get("0000:af:00.0")!.status).toBe("CRITICAL");
    expect(health.get("0000:af:00.0")!.reasons.map((r) => r.code)).toEqual([
      "AER_CORRECTABLE",
      "ECC_VOLATILE_UNCORRECTABLE",
      "ECC_AGGREGATE_UNCORRECTABLE",
      "ROW_REMAP_PENDING",
      "XID",
      "XID",
    ]);
    // The A100's VFs: nvidia-smi does not describe them; the XIDs of their slot are the card's.
    expect(health.get("0000:af:00.4")).toMatchObject({ status: "WARNING", reasons: [{ code: "HEALTH_UNREADABLE" }, { code: "XID" }, { code: "XID" }] });
    for (const d of devices) expect(validateHealth(d.health, "health")?.status).toBe(d.health!.status);
  });

  it("never fails the report: a source that cannot be read makes the GPU UNKNOWN, with why", async () => {
    const env = fixtureEnv("mixed-host", {
      sysfsRoot: SYS,
      health: { nvidiaSmi: () => Promise.reject(new Error("nvidia-smi not found")), kernelLog: () => Promise.reject(new Error("dmesg: read kernel buffer failed: Operation not permitted")) },
    });
    const [t4] = await withHealth(await gpusOfMixedHost(), env);
    expect(t4!.health).toEqual({
      status: "UNKNOWN",
      reasons: [
        { code: "HEALTH_UNREADABLE", message: "nvidia-smi: nvidia-smi not found" },
        { code: "HEALTH_UNREADABLE", message: "kernel log (XID events): dmesg: read kernel buffer failed: Operation not permitted" },
      ],
    });
  });

  it("runs each host-wide source once a pass, and leaves stubs as they are", async () => {
    let runs = 0;
    const env = fixtureEnv("mixed-host", { sysfsRoot: SYS, health: { nvidiaSmi: () => (runs++, fixture("nvidia-smi-r555.xml")) } });
    const gpus = await gpusOfMixedHost();
    const devices = await withHealth([...gpus, { ...gpus[0]!, stub: true }], env);
    expect(runs).toBe(1);
    expect(devices.at(-1)).not.toHaveProperty("health");
  });

  it("gives the fake device the injected health, OK without one", async () => {
    const env = fixtureEnv("no-accelerators");
    const [plain] = await withHealth(await fakeDriver.discover(env), env);
    expect(plain!.health).toEqual({ status: "OK", reasons: [] });
    const injected = { status: "CRITICAL" as const, reasons: [{ code: "INJECTED", message: "burn-in failed" }] };
    const sick = { ...env, config: { fake: { health: injected } } };
    const [fake] = await withHealth(await fakeDriver.discover(sick), sick);
    expect(fake!.health).toEqual(injected);
  });

  it("keeps a reason's message within what the service takes", () => {
    const h = combineHealth([{ status: "WARNING", reasons: [{ code: "XID", message: "x".repeat(300) }] }]);
    expect(h.reasons[0]!.message).toHaveLength(255);
    expect(validateHealth(h, "health")).toEqual(h);
  });
});

describe("--fake-health-file", () => {
  it("is read every pass, and a file that is not a health makes the fake device UNKNOWN with why", async () => {
    const { driverEnv } = await import("../../../src/clients/agent/driver-env.js");
    const path = join(mkdtempSync(join(tmpdir(), "fake-health-")), "health.json");
    writeFileSync(path, JSON.stringify({ status: "WARNING", reasons: [{ code: "INJECTED", message: "burn-in" }] }));
    const opts = { hostname: "compute1", drivers: "fake", sysfsRoot: "/nonexistent", lspci: "true", pciWhitelist: "[]", nvidiaSkipVfs: false, vgpuTypes: "", fakeHealthFile: path };
    const env = driverEnv(opts);
    const pass = async () => (await withHealth(await fakeDriver.discover(env), env))[0]!.health;
    expect(await pass()).toEqual({ status: "WARNING", reasons: [{ code: "INJECTED", message: "burn-in" }] });
    writeFileSync(path, JSON.stringify({ status: "OK", reasons: [] }));
    expect(await pass()).toEqual({ status: "OK", reasons: [] });
    writeFileSync(path, "{ broken");
    expect(await pass()).toMatchObject({ status: "UNKNOWN", reasons: [{ code: "HEALTH_UNREADABLE" }] });
  });
});
