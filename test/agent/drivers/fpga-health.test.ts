/**
 * Intel FPGA health from OPAE's `fpgainfo errors all` (fixtures in test/fixtures/fpga-health, in
 * the layouts OPAE's fpgainfo prints): a nonzero error register is a reason, CRITICAL or WARNING
 * by the register; all clear is OK; a host without fpgainfo reports what the other sources say.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parseFpgainfoErrors } from "../../../src/clients/agent/drivers/health/fpgainfo.js";
import { withHealth } from "../../../src/clients/agent/drivers/health/index.js";
import { fpgainfoErrorsRunner } from "../../../src/clients/agent/drivers/host-commands.js";
import { intelFpgaDriver } from "../../../src/clients/agent/drivers/intel-fpga.js";
import { validateHealth } from "../../../src/domain/inventory/health.js";
import { FIXTURES, fixtureEnv } from "./fixture-env.js";

const fixture = (name: string) => readFile(`${FIXTURES}fpga-health/${name}`, "utf8");
// No AER counters for the PAC in this tree: what is read is fpgainfo's alone.
const SYS = `${FIXTURES}gpu-health/sys`;

const FAULTY = {
  status: "CRITICAL",
  reasons: [
    { code: "FPGA_PCIE_ERRORS", message: "FPGA PCIe link 0 errors (FME PCIe0 Errors 0x80): TLP CPL timeout error detected.", count: 1 },
    { code: "FPGA_CATFATAL", message: "catastrophic or fatal FPGA errors (FME Catfatal Errors 0x200): Catastrophic CRC error detected.", count: 1 },
    { code: "FPGA_NONFATAL", message: "non-fatal FPGA errors (FME Nonfatal Errors 0x4): PCIe error detected.", count: 1 },
    { code: "FPGA_PORT_ERRORS", message: "accelerator port errors (the port stops until reset) (PORT Errors 0x80): mmio timeout error detected.", count: 1 },
  ],
};

describe("fpgainfo errors all", () => {
  it("turns each nonzero error register of a card's FME and port into a reason, not the latches or the injection control", async () => {
    const cards = parseFpgainfoErrors(await fixture("fpgainfo-errors-all.txt"));
    expect([...cards.keys()]).toEqual(["0000:5e:00"]);
    expect(cards.get("0000:5e:00")).toEqual(FAULTY);
  });

  it("reads the older tool's layout (Bus, Device, Function lines), all clear as OK", async () => {
    const cards = parseFpgainfoErrors(await fixture("fpgainfo-errors-all-opae-1.1.txt"));
    expect(cards.get("0000:5e:00")).toEqual({ status: "OK", reasons: [] });
  });

  it("reads set bits spelled out on tabbed lines, a register without them, and says nothing of text that is not fpgainfo's", () => {
    const text = [
      "//****** FME ERRORS ******//",
      "Object Id                : 0xF000000",
      "Bus                      : 0x3B",
      "Segment                  : 0x0000",
      "Device                   : 0x00",
      "Function                 : 0x00",
      "Catfatal Errors                  : 0x300",
      "\t Catastrophic CRC error detected. ",
      "\t Catastrophic thermal runaway event detected. ",
      "Nonfatal Errors                  : 0x1",
    ].join("\n");
    expect(parseFpgainfoErrors(text).get("0000:3b:00")).toEqual({
      status: "CRITICAL",
      reasons: [
        { code: "FPGA_CATFATAL", message: "catastrophic or fatal FPGA errors (FME Catfatal Errors 0x300): Catastrophic CRC error detected. Catastrophic thermal runaway event detected.", count: 2 },
        { code: "FPGA_NONFATAL", message: "non-fatal FPGA errors (FME Nonfatal Errors 0x1)", count: 1 },
      ],
    });
    expect(parseFpgainfoErrors("No suitable slots found.\n").size).toBe(0);
  });
});

describe("withHealth: an Intel FPGA's health", () => {
  const pacOfMixedHost = async () => (await intelFpgaDriver.discover(fixtureEnv("mixed-host"))).filter((d) => d.type === "FPGA");

  it("is what fpgainfo says of the card, in the shape the service takes", async () => {
    const env = fixtureEnv("mixed-host", { sysfsRoot: SYS, health: { fpgainfoErrors: () => fixture("fpgainfo-errors-all.txt") } });
    const [pac] = await withHealth(await pacOfMixedHost(), env);
    expect(pac!.health).toEqual(FAULTY);
    // The service takes it as it is (ordering the reasons by code).
    expect(validateHealth(pac!.health, "health")?.reasons).toHaveLength(FAULTY.reasons.length);
  });

  it("stays as the other sources say when fpgainfo is not installed, and is UNKNOWN with why when it fails or leaves the card out", async () => {
    const absent = fixtureEnv("mixed-host", { sysfsRoot: SYS, health: { fpgainfoErrors: fpgainfoErrorsRunner("/nonexistent/fpgainfo") } });
    expect((await withHealth(await pacOfMixedHost(), absent))[0]!.health).toEqual({ status: "OK", reasons: [] });

    const failing = fixtureEnv("mixed-host", { sysfsRoot: SYS, health: { fpgainfoErrors: () => Promise.reject(new Error("fpgainfo errors all failed (exit 1): no FPGA resources")) } });
    expect((await withHealth(await pacOfMixedHost(), failing))[0]!.health).toEqual({
      status: "UNKNOWN",
      reasons: [{ code: "HEALTH_UNREADABLE", message: "fpgainfo errors all: fpgainfo errors all failed (exit 1): no FPGA resources" }],
    });

    const other = fixtureEnv("mixed-host", { sysfsRoot: SYS, health: { fpgainfoErrors: async () => (await fixture("fpgainfo-errors-all.txt")).replaceAll("0000:5E", "0000:AF") } });
    expect((await withHealth(await pacOfMixedHost(), other))[0]!.health).toMatchObject({ status: "UNKNOWN", reasons: [{ code: "HEALTH_UNREADABLE", message: "fpgainfo errors all: it does not list this card" }] });
  });
});
