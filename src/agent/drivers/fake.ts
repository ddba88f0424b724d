/**
 * Cyborg's fake driver (drivers/fake.py): one FPGA that is always there, so that a host without
 * accelerators can still exercise the whole flow. Its 16 TEST_PCI handles sit on the device's bus;
 * function numbers 1..16 are spread over device/function exactly as Cyborg does, which writes the
 * device number unpadded ("0", "1", "2").
 */
import type { DriverAttachHandle, DriverDevice } from "../../domain/inventory/report.js";
import type { Driver } from "./driver.js";
import { attributeList, sanitizeRpName } from "./naming.js";

export const FAKE_NUM_ACCELERATORS = 16;
const FUNCTIONS_PER_PCI_DEVICE = 8;
const CPID = { domain: "0000", bus: "0c", device: "00", function: "0" } as const;

function attachHandles(): DriverAttachHandle[] {
  const handles: DriverAttachHandle[] = [];
  for (let fn = 1; fn <= FAKE_NUM_ACCELERATORS; fn++) {
    handles.push({
      type: "TEST_PCI",
      info: {
        ...CPID,
        device: String(Math.floor(fn / FUNCTIONS_PER_PCI_DEVICE)),
        function: String(fn % FUNCTIONS_PER_PCI_DEVICE),
      },
    });
  }
  return handles;
}

export const fakeDriver: Driver = {
  name: "fake",
  async discover(env): Promise<DriverDevice[]> {
    return [
      {
        type: "FPGA",
        vendor: "0xABCD",
        model: "miss model info",
        stdBoardInfo: { device_id: "0xabcd", class: "Fake class" },
        vendorBoardInfo: { info: "fake_vendor_info" },
        controlPath: { type: "PCI", info: { ...CPID } },
        stub: false,
        deployables: [
          {
            name: sanitizeRpName(`${env.hostname}_FakeDevice`),
            numAccelerators: FAKE_NUM_ACCELERATORS,
            driverName: "fake",
            attributes: attributeList("FPGA", ["CUSTOM_FAKE_DEVICE"]),
            attachHandles: attachHandles(),
          },
        ],
      },
    ];
  },
};
