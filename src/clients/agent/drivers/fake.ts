/**
 * Cyborg's fake driver (drivers/fake.py): one FPGA that is always there, so that a host without
 * accelerators can still exercise the whole flow. Its 16 TEST_PCI handles sit on the device's bus;
 * function numbers 1..16 are spread over device/function exactly as Cyborg does, which writes the
 * device number unpadded ("0", "1", "2").
 *
 * It also stands in for an FPGA that can be programmed (config.fake, the agent's --fake-* options):
 * a region type trait, a program command that takes a set time and can be made to fail, and a
 * device that keeps what it was programmed with (its function trait is reported from then on, in
 * memory or in a state file), as a real card's sysfs would show its loaded AFU.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { DriverAttachHandle } from "../../../domain/inventory/handle-report.js";
import type { DriverDevice } from "../../../domain/inventory/report.js";
import type { Cleaner, Driver, DriverEnv, FakeFpgaConfig, Programmer } from "./driver.js";
import { bdfOf, cleanDigest } from "./clean-step.js";
import { attributeList, functionIdTrait, regionTrait, sanitizeRpName } from "./naming.js";

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

/** What the fake device was programmed with, by deployable name. */
type FakeState = Record<string, { bitstreamId: string; functionId: string | null }>;
const memory = new Map<string, FakeState>();

function loadState(config: FakeFpgaConfig | undefined, host: string): FakeState {
  if (!config?.stateFile) return memory.get(host) ?? {};
  try {
    return JSON.parse(readFileSync(config.stateFile, "utf8")) as FakeState;
  } catch {
    return {};
  }
}

function saveState(config: FakeFpgaConfig | undefined, host: string, state: FakeState): void {
  if (config?.stateFile) writeFileSync(config.stateFile, JSON.stringify(state, null, 2));
  else memory.set(host, state);
}

export const FAKE_PROGRAM = "fake-program";

export const fakeProgrammer: Programmer = {
  driverNames: ["fake"],
  command: ({ controlPath: pci, deployableName, file }) => [FAKE_PROGRAM, "--device", `${pci.domain}:${pci.bus}:${pci.device}.${pci.function}`, "--region", deployableName, file],
  async program(env: DriverEnv, target) {
    const command = this.command(target);
    const config = env.config.fake;
    if (config?.programDelayMs) await new Promise((r) => setTimeout(r, config.programDelayMs));
    if (config?.programFailure) throw new Error(config.programFailure);
    const state = loadState(config, env.hostname);
    state[target.deployableName] = { bitstreamId: target.bitstream.id, functionId: target.bitstream.functionId };
    saveState(config, env.hostname, state);
    return { command };
  },
};

export const FAKE_CLEAN = "fake-clean";

/** Cleans at once (or after --fake-clean-delay), or fails with --fake-clean-fail's message. */
export const fakeCleaner: Cleaner = {
  driverNames: ["fake"],
  command: ({ controlPath }) => [FAKE_CLEAN, "--device", bdfOf(controlPath)],
  async clean(env, target) {
    const command = this.command(target);
    const config = env.config.fake;
    if (config?.cleanDelayMs) await new Promise((r) => setTimeout(r, config.cleanDelayMs));
    if (config?.cleanFailure) throw new Error(config.cleanFailure);
    return { command, digest: cleanDigest(command, "cleaned") };
  },
};

export const fakeDriver: Driver = {
  name: "fake",
  programmer: fakeProgrammer,
  cleaner: fakeCleaner,
  async discover(env): Promise<DriverDevice[]> {
    const name = sanitizeRpName(`${env.hostname}_FakeDevice`);
    const config = env.config.fake;
    const programmed = config ? loadState(config, env.hostname)[name] : undefined;
    // Cyborg's fake device trait, kept as Cyborg names it: the profiles of Cyborg's own test suite ask for it.
    const traits = ["CUSTOM_FAKE_DEVICE"];
    if (config?.regionType) traits.push(regionTrait("FAKE", config.regionType));
    // Listed last, as the service adds it when it records a programming (same trait key).
    if (programmed?.functionId) traits.push(functionIdTrait("FAKE", programmed.functionId));
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
            name,
            numAccelerators: FAKE_NUM_ACCELERATORS,
            driverName: "fake",
            attributes: attributeList("FPGA", traits),
            attachHandles: attachHandles(),
          },
        ],
      },
    ];
  },
};
