/**
 * contrib/migrations/driver-traits.json: the trait names drivers reported before they followed the
 * agent-driver spec's patterns, and the names they report now. Operators apply it to their device
 * profiles on upgrade (`cyborg-es profiles migrate --file contrib/migrations/driver-traits.json`).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { discoverAll } from "../../../src/clients/agent/drivers/index.js";
import { isCustomTrait } from "../../../src/domain/shared/traits.js";
import { fixtureEnv, recordingLog } from "./fixture-env.js";

const mapping = JSON.parse(readFileSync(new URL("../../../contrib/migrations/driver-traits.json", import.meta.url), "utf8")) as {
  traits: Record<string, string>;
  resourceClasses: Record<string, string>;
};

/** What the drivers reported on the fixture hosts under the old names (their tests' expectations then). */
const BEFORE = [
  "CUSTOM_NVIDIA_1EB8",
  "CUSTOM_NVIDIA_1EB8_T4_2B",
  "CUSTOM_NVIDIA_20B0",
  "CUSTOM_NVIDIA_20B0_A100_4C",
  "CUSTOM_FPGA_PRODUCT_ID_5004",
  "CUSTOM_FPGA_REGION_INTEL_9926AB6D6C925A68AABCA7D84C545738",
  "CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A3C413F89E433683F9040B",
  "CUSTOM_FPGA_REGION_INTEL_A6D72D5D3D0D59A4A5F8D1E77E5FA4C3",
  "CUSTOM_FPGA_FUNCTION_ID_INTEL_C000C9660D8242729AEFFE5F84570612",
  "CUSTOM_FPGA_FUNCTION_ID_INTEL_850ADCC2_6CEB_4B22_9722_D43375B61C66",
];

async function reportedTraits(): Promise<Set<string>> {
  const names = ["nvidia-gpu", "intel-fpga", "xilinx-fpga", "intel-qat"];
  const nvidia = { enabledVgpuTypes: ["nvidia-223", "nvidia-472"], vgpuDeviceAddresses: { "nvidia-223": ["0000:3b:00.0"] } };
  const traits = new Set<string>();
  for (const fixture of ["mixed-host", "fpga-variants"]) {
    for (const config of [{}, { nvidia }]) {
      const { devices } = await discoverAll(names, fixtureEnv(fixture, { config }), recordingLog());
      for (const d of devices) for (const dep of d.deployables) for (const a of dep.attributes) if (a.key.startsWith("trait")) traits.add(a.value);
    }
  }
  return traits;
}

describe("the driver trait migration", () => {
  it("is a profile migration file: renamed traits, no resource class renamed", () => {
    expect(Object.keys(mapping).sort()).toEqual(["resourceClasses", "traits"]);
    expect(mapping.resourceClasses).toEqual({});
    for (const [before, after] of Object.entries(mapping.traits)) {
      expect(isCustomTrait(before) && isCustomTrait(after), `${before} -> ${after}`).toBe(true);
      expect(after).not.toBe(before);
      expect(Object.hasOwn(mapping.traits, after), `${after} is renamed again`).toBe(false);
    }
  });

  it("maps each name the drivers reported before on the fixture hosts to one they report now", async () => {
    const now = await reportedTraits();
    for (const before of BEFORE) {
      expect(now.has(before), `${before} is still reported`).toBe(false);
      expect(now, `${before} -> ${mapping.traits[before]}`).toContain(mapping.traits[before]);
    }
  });
});
