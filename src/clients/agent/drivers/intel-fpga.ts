/**
 * Intel programmable acceleration cards (Cyborg fpga/intel), found in sysfs: PFs under
 * <root>/bus/pci/devices whose vendor/device is 0x8086 and a known PAC id. The OPAE driver adds a
 * `fpga/intel-fpga-dev.N/` child; without it the card is reported as a `stub` (present, not ready).
 * The FME (`intel-fpga-fme.N/pr/interface_id`) describes the PR region; the port
 * (`intel-fpga-port.N/afu_id`) holds the loaded function, on the PF or, with SR-IOV on, on each VF.
 *
 * Layout "nested" (default), after the agent-driver spec ("create an RP for the device and each
 * region within"):
 *   <host>_<PF>          device deployable: no inventory, no handles; CUSTOM_FPGA_INTEL, CUSTOM_FPGA_INTEL_<PRODUCT>
 *   <host>_<PF>_region0  parentName = the device deployable; rc FPGA; one accelerator and one PCI
 *                        handle per port function (the PF, or each VF); the device traits again,
 *                        CUSTOM_FPGA_INTEL_REGION_<interface id>, CUSTOM_FPGA_INTEL_FUNCTION_<afu id>
 * Functions are traits of the region, not deployables of their own, as the spec says. The device
 * traits are repeated on the region because a numbered Placement request group (how device profiles
 * are translated) needs resources and traits on the same provider. One region per card: a PAC has
 * one FME, and the spec scopes one region per FPGA.
 * Layout "flat" is Cyborg's: one deployable holding everything, named after the PF, or after the
 * last VF when SR-IOV is on.
 */
import { join } from "node:path";
import type { DriverAttachHandle } from "../../../domain/inventory/handle-report.js";
import type { DriverDeployable, DriverDevice } from "../../../domain/inventory/report.js";
import type { Driver, Programmer, DriverEnv } from "./driver.js";
import { runProgram } from "./host-commands.js";
import { intelFpgaCleaner } from "./intel-fpga-clean.js";
import { FPGACONF } from "./opae.js";
import { attributeList, deployableName, deviceTraits, functionIdTrait, pciAddress, regionTrait } from "./naming.js";
import { discoverPhysicalFunctions, listDir, pciDeviceDir, readLine, virtualFunctions } from "./sysfs.js";

export const INTEL_VENDOR_ID = "8086";
const DRIVER_NAME = "intel";

/** PF device ids: the trait suffix Cyborg uses (PRODUCT_MAP) and a model name. */
export const INTEL_FPGA_PRODUCTS: Record<string, { trait: string; model: string }> = {
  "09c4": { trait: "PAC_ARRIA10", model: "Intel PAC Arria 10 GX" },
  "0b30": { trait: "PAC_N3000", model: "Intel PAC N3000" },
  "0b2b": { trait: "PAC_D5005", model: "Intel PAC D5005" },
};

async function idsUnder(fpgaDir: string, child: RegExp, file: string): Promise<string[]> {
  const ids: string[] = [];
  for (const dev of await listDir(fpgaDir)) {
    for (const entry of (await listDir(join(fpgaDir, dev))).filter((e) => child.test(e))) {
      const id = await readLine(join(fpgaDir, dev, entry, file));
      if (id) ids.push(id);
    }
  }
  return ids;
}

const regionIds = (deviceDir: string) => idsUnder(join(deviceDir, "fpga"), /^intel-fpga-fme\.\d+$/, join("pr", "interface_id"));
const afuIds = (deviceDir: string) => idsUnder(join(deviceDir, "fpga"), /^intel-fpga-port\.\d+$/, "afu_id");

/** Device-level traits, and all traits (device, region, function) for the deployable with the inventory. */
async function fpgaTraits(env: DriverEnv, pfDir: string, product: string, ports: string[]) {
  const device = deviceTraits("FPGA", "INTEL", product);
  const regions = (await regionIds(pfDir)).map((id) => regionTrait("INTEL", id));
  const functions: string[] = [];
  for (const port of ports) {
    for (const id of await afuIds(pciDeviceDir(env.sysfsRoot, port))) functions.push(functionIdTrait("INTEL", id));
  }
  return { device, all: [...device, ...regions, ...functions] };
}

async function fpgaDevice(env: DriverEnv, pf: string, productId: string): Promise<DriverDevice> {
  const product = INTEL_FPGA_PRODUCTS[productId]!;
  const pfDir = pciDeviceDir(env.sysfsRoot, pf);
  const stub = (await listDir(join(pfDir, "fpga"))).length === 0;
  const vfs = await virtualFunctions(pfDir);
  const ports = vfs.length > 0 ? vfs : [pf];
  const handles: DriverAttachHandle[] = ports.map((f) => ({ type: "PCI", info: pciAddress(f) }));
  // Cyborg gives a stub no traits at all.
  const traits = stub ? { device: [], all: [] } : await fpgaTraits(env, pfDir, product.trait, ports);
  const withInventory = (name: string): DriverDeployable => ({
    name,
    numAccelerators: handles.length,
    driverName: DRIVER_NAME,
    attributes: attributeList("FPGA", traits.all),
    attachHandles: handles,
  });

  const deviceName = deployableName(env.hostname, pf);
  const deployables: DriverDeployable[] =
    (env.config.intelFpga?.layout ?? "nested") === "flat"
      ? [withInventory(deployableName(env.hostname, ports[ports.length - 1]!))]
      : [
          { name: deviceName, numAccelerators: 0, driverName: DRIVER_NAME, attributes: attributeList(null, traits.device), attachHandles: [] },
          { ...withInventory(`${deviceName}_region0`), parentName: deviceName },
        ];

  return {
    type: "FPGA",
    vendor: `0x${INTEL_VENDOR_ID}`,
    model: product.model,
    stdBoardInfo: { product_id: `0x${productId}` },
    vendorBoardInfo: null,
    controlPath: { type: "PCI", info: pciAddress(pf) },
    stub,
    deployables,
  };
}

/** `fpgaconf` (OPAE) addresses the PAC by the PF's bus/device/function. */
export { FPGACONF };

export const intelFpgaProgrammer: Programmer = {
  driverNames: [DRIVER_NAME],
  command: ({ controlPath: pci, file }) => [FPGACONF, "--bus", `0x${pci.bus}`, "--device", `0x${pci.device}`, "--function", `0x${pci.function}`, file],
  async program(env, target) {
    const command = this.command(target);
    await runProgram(env, command);
    return { command };
  },
};

export const intelFpgaDriver: Driver = {
  name: "intel-fpga",
  programmer: intelFpgaProgrammer,
  cleaner: intelFpgaCleaner,
  discover(env) {
    return discoverPhysicalFunctions(env, INTEL_VENDOR_ID, INTEL_FPGA_PRODUCTS, "FPGA", (bdf, productId) => fpgaDevice(env, bdf, productId));
  },
};
