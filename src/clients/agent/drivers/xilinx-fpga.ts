/**
 * Xilinx Alveo cards (Cyborg fpga/xilinx): `lspci -nnn -D` lines of class "Processing accelerators"
 * with vendor 10ee. A card shows two functions on one slot (mgmt PF for xclmgmt, user PF for xocl);
 * functions sharing domain:bus:slot are one device whose control path is the first function, the
 * others its additional control paths (the database-model spec: a device may have several), with
 * one accelerator and a PCI handle per function (both must be given to the guest to program it).
 */
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { Driver, Programmer } from "./driver.js";
import { runProgram } from "./host-commands.js";
import { xilinxFpgaCleaner } from "./xilinx-fpga-clean.js";
import { parseLspci, warnMalformed, type LspciDevice } from "./lspci.js";
import { lspciDevice } from "./lspci-device.js";
import { attributeList, deviceTraits, pciAddress } from "./naming.js";

export const XILINX_VENDOR_ID = "10ee";
const CLASS_NAME = "Processing accelerators";

/** Functions grouped by domain:bus:slot, each group in function order, groups in lspci order. */
function bySlot(functions: LspciDevice[]): LspciDevice[][] {
  const groups = new Map<string, LspciDevice[]>();
  for (const fn of functions) {
    const slot = fn.address.split(".")[0]!;
    groups.set(slot, [...(groups.get(slot) ?? []), fn]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.address.localeCompare(b.address)));
}

/** XRT's `xbmgmt program --base` loads a shell onto the card, addressed by its management PF (cyborg-reference 5.6). */
export const XBMGMT = "/opt/xilinx/xrt/bin/xbmgmt";

export const xilinxFpgaProgrammer: Programmer = {
  driverNames: ["XILINX"],
  command: ({ controlPath: pci, file }) => [XBMGMT, "program", "--device", `${pci.domain}:${pci.bus}:${pci.device}.${pci.function}`, "--base", "--image", file],
  async program(env, target) {
    const command = this.command(target);
    await runProgram(env, command);
    return { command };
  },
};

export const xilinxFpgaDriver: Driver = {
  name: "xilinx-fpga",
  programmer: xilinxFpgaProgrammer,
  cleaner: xilinxFpgaCleaner,
  async discover(env) {
    const listing = parseLspci(await env.lspci());
    warnMalformed(listing, (line) => line.includes("Xilinx") || line.includes(`[${XILINX_VENDOR_ID}:`), env.log);
    const cards = bySlot(listing.devices.filter((d) => d.vendorId === XILINX_VENDOR_ID && d.className === CLASS_NAME));
    return cards.map(
      (functions): DriverDevice => {
        const first = functions[0]!;
        const device = lspciDevice(env.hostname, first, {
          type: "FPGA",
          model: first.description,
          vendorBoardInfo: { vendor_info: "fpga_vb_info" },
          deployable: {
            numAccelerators: 1,
            driverName: "XILINX",
            attributes: attributeList("FPGA", deviceTraits("FPGA", "XILINX", first.productId)),
            attachHandles: functions.map((fn) => ({ type: "PCI" as const, info: pciAddress(fn.address) })),
          },
        });
        return { ...device, additionalControlPaths: functions.slice(1).map((fn) => ({ type: "PCI", info: pciAddress(fn.address) })) };
      },
    );
  },
};
