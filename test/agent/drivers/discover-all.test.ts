import { describe, expect, it } from "vitest";
import type { Driver, DriverLog } from "../../../src/clients/agent/drivers/driver.js";
import { discoverAll, drivers } from "../../../src/clients/agent/drivers/index.js";
import { createLogger, type Logger } from "../../../src/infra/logger.js";
import { fixtureEnv, recordingLog } from "./fixture-env.js";

const ALL = ["fake", "nvidia-gpu", "intel-fpga", "xilinx-fpga", "intel-qat", "pci"];
const throwing: Driver = {
  name: "broken",
  discover: () => Promise.reject(new Error("lspci exploded")),
};

describe("discoverAll", () => {
  it("registers the seven drivers under their names", () => {
    expect(Object.keys(drivers)).toEqual(["fake", "fake-mig", ...ALL.slice(1)]);
    for (const [name, driver] of Object.entries(drivers)) expect(driver.name).toBe(name);
  });

  it("runs every enabled driver on the mixed host, in the order given", async () => {
    const log = recordingLog();
    const env = fixtureEnv("mixed-host", { config: { pci: { whitelist: [{ vendorId: "15b3" }] } } });
    const { devices, errors } = await discoverAll(ALL, env, log);
    expect(errors).toEqual([]);
    expect(devices.map((d) => [d.type, d.deployables[0]!.name])).toEqual([
      ["FPGA", "compute1_FakeDevice"],
      ["GPU", "compute1_0000:3b:00.0"],
      ["GPU", "compute1_0000:86:00.0"],
      ["GPU", "compute1_0000:af:00.0"],
      ["GPU", "compute1_0000:af:00.4"],
      ["GPU", "compute1_0000:af:00.5"],
      ["FPGA", "compute1_0000:5e:00.0"],
      ["FPGA", "compute1_0000:d8:00.0"],
      ["QAT", "compute1_0000:3d:01.0"],
      ["QAT", "compute1_0000:3f:00.0"],
      ["NIC", "compute1_0000:5f:00.0"],
    ]);
    expect(log.warnings).toEqual([]);
  });

  it("reports only the fake device on a host without accelerators", async () => {
    const { devices, errors } = await discoverAll(ALL, fixtureEnv("no-accelerators"), recordingLog());
    expect(errors).toEqual([]);
    expect(devices.map((d) => d.deployables[0]!.name)).toEqual(["compute1_FakeDevice"]);
  });

  it("keeps going when a driver throws, and says which one failed", async () => {
    const { devices, errors } = await discoverAll(["broken", "xilinx-fpga", "intel-qat"], fixtureEnv("mixed-host"), recordingLog(), {
      ...drivers,
      broken: throwing,
    });
    expect(errors).toEqual([{ driver: "broken", message: "lspci exploded" }]);
    expect(devices.map((d) => d.type)).toEqual(["FPGA", "QAT", "QAT"]);
  });

  it("fails every lspci driver but not the sysfs ones when lspci fails, and runs lspci once", async () => {
    let runs = 0;
    const env = fixtureEnv("mixed-host", {
      lspci: () => {
        runs++;
        return Promise.reject(new Error("lspci not found: install pciutils"));
      },
      config: { pci: { whitelist: [{ vendorId: "10de" }] } },
    });
    const { devices, errors } = await discoverAll(ALL, env, recordingLog());
    expect(runs).toBe(1);
    expect(errors).toEqual(
      ["nvidia-gpu", "xilinx-fpga", "pci"].map((driver) => ({ driver, message: "lspci not found: install pciutils" })),
    );
    expect(devices.map((d) => d.type)).toEqual(["FPGA", "FPGA", "QAT", "QAT"]);
  });

  it("reports unknown driver names as errors and ignores repeated names", async () => {
    const { devices, errors } = await discoverAll(["fake", "fake", "gpu_driver"], fixtureEnv("no-accelerators"), recordingLog());
    expect(devices).toHaveLength(1);
    expect(errors).toEqual([{ driver: "gpu_driver", message: expect.stringMatching(/^unknown driver "gpu_driver" \(known: fake, fake-mig, nvidia-gpu/) }]);
  });

  it("drops a device an earlier driver already reported (a GPU also on the pci whitelist)", async () => {
    const env = fixtureEnv("mixed-host", { config: { pci: { whitelist: [{ productId: "20b0" }] } } });
    const log = recordingLog();
    const { devices, errors } = await discoverAll(["nvidia-gpu", "pci"], env, log);
    expect(devices.map((d) => d.type)).toEqual(["GPU", "GPU", "GPU", "GPU", "GPU"]);
    expect(devices.every((d) => d.deployables[0]!.driverName === "NVIDIA")).toBe(true);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toEqual({
      driver: "pci",
      message:
        'device {"bus":"af","device":"00","domain":"0000","function":"0"} ignored: control path {"bus":"af","device":"00","domain":"0000","function":"0"} already reported by driver nvidia-gpu',
    });
    expect(log.warnings).toHaveLength(3);
  });

  it("drops a whitelisted function that is already a control path of another driver's device", async () => {
    const env = fixtureEnv("mixed-host", { config: { pci: { whitelist: [{ productId: "5005" }, { productId: "1017" }] } } });
    const { devices, errors } = await discoverAll(["xilinx-fpga", "pci"], env, recordingLog());
    expect(devices.map((d) => d.deployables[0]!.name)).toEqual(["compute1_0000:d8:00.0", "compute1_0000:5f:00.0"]);
    expect(errors).toEqual([{ driver: "pci", message: expect.stringContaining('control path {"bus":"d8","device":"00","domain":"0000","function":"1"} already reported by driver xilinx-fpga') }]);
  });

  it("skips malformed lines and bad devices with warnings tagged by driver, and reports the rest", async () => {
    const log = recordingLog();
    const env = fixtureEnv("malformed", { config: { nvidia: { enabledVgpuTypes: ["nvidia-223"] } } });
    const { devices, errors } = await discoverAll(["nvidia-gpu", "intel-fpga", "xilinx-fpga", "intel-qat"], env, log);
    expect(errors).toEqual([]);
    expect(devices.map((d) => `${d.type} ${String(d.controlPath.info.bus)}`)).toEqual(["GPU 3b", "GPU af", "FPGA 5f", "FPGA d8", "FPGA d9", "QAT 3d", "QAT 3f"]);
    expect(log.warnings.map((w) => [w.fields.driver, w.msg])).toEqual(
      expect.arrayContaining([
        ["nvidia-gpu", "skipped a malformed lspci line"],
        ["nvidia-gpu", "GPU skipped"],
        ["intel-fpga", "FPGA skipped"],
        ["xilinx-fpga", "skipped a malformed lspci line"],
      ]),
    );
    expect(log.warnings).toHaveLength(5);
  });

  it("accepts the service's pino logger as its log", () => {
    const logger: Logger = createLogger("silent");
    const log: DriverLog = logger;
    expect(typeof log.warn).toBe("function");
  });
});
