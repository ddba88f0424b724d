import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseLspci, parseLspciLine } from "../../../src/clients/agent/drivers/lspci.js";
import { FIXTURES } from "./fixture-env.js";

describe("lspci -nnn -D parser", () => {
  it("splits a GPU line into its fields", () => {
    expect(parseLspciLine("0000:af:00.0 3D controller [0302]: NVIDIA Corporation TU104GL [Tesla T4] [10de:1eb8] (rev a1)")).toEqual({
      address: "0000:af:00.0",
      classCode: "0302",
      className: "3D controller",
      description: "NVIDIA Corporation TU104GL [Tesla T4]",
      vendorName: "NVIDIA Corporation",
      vendorId: "10de",
      deviceName: "TU104GL [Tesla T4]",
      productId: "1eb8",
      rev: "a1",
    });
  });

  it("reads lines without a revision, with bracketed class names and unknown devices", () => {
    expect(parseLspciLine("0000:d8:00.0 Processing accelerators [1200]: Xilinx Corporation Device [10ee:5004]")).toMatchObject({
      className: "Processing accelerators",
      classCode: "1200",
      vendorName: "Xilinx Corporation",
      deviceName: "Device",
      productId: "5004",
      rev: null,
    });
    expect(
      parseLspciLine("0000:00:17.0 SATA controller [0106]: Intel Corporation C620 Series Chipset Family SATA Controller [AHCI mode] [8086:a182] (rev 09)"),
    ).toMatchObject({ deviceName: "C620 Series Chipset Family SATA Controller [AHCI mode]", productId: "a182", rev: "09" });
  });

  it("splits vendors it has no table entry for at a company suffix, else keeps the whole text as the device", () => {
    expect(parseLspciLine("0000:02:00.0 VGA compatible controller [0300]: ASPEED Technology, Inc. ASPEED Graphics Family [1a03:2000] (rev 41)")).toMatchObject({
      vendorName: "ASPEED Technology, Inc.",
      deviceName: "ASPEED Graphics Family",
    });
    expect(parseLspciLine("0000:02:00.0 Unassigned class [ff00]: Acme Widget 3000 [abcd:0001]")).toMatchObject({
      vendorName: "",
      deviceName: "Acme Widget 3000",
      description: "Acme Widget 3000",
    });
  });

  it("lower-cases hex ids and addresses", () => {
    expect(parseLspciLine("0000:AF:00.0 3D controller [0302]: NVIDIA Corporation Device [10DE:1EB8] (rev A1)")).toMatchObject({
      address: "0000:af:00.0",
      vendorId: "10de",
      productId: "1eb8",
      rev: "a1",
    });
  });

  it.each([
    ["truncated", "0000:5e:00.0 3D controller [0302]: NVIDIA Corporation TU104GL [Tesla T4] [10de:1e"],
    ["no domain (lspci without -D)", "00:1f.0 ISA bridge [0601]: Intel Corporation C621 Series Chipset LPC/eSPI Controller [8086:a1c1] (rev 09)"],
    ["no ids (lspci without -nn)", "0000:3b:00.0 3D controller: NVIDIA Corporation TU104GL [Tesla T4] (rev a1)"],
    ["function out of range", "0000:3b:00.8 3D controller [0302]: NVIDIA Corporation TU104GL [Tesla T4] [10de:1eb8] (rev a1)"],
    ["garbage", "@@@ garbage ### 0000:zz:00.0 VGA compatible controller"],
  ])("rejects a %s line", (_, line) => {
    expect(parseLspciLine(line)).toBeNull();
  });

  it("lists the mixed host's 28 devices and nothing malformed", () => {
    const listing = parseLspci(readFileSync(`${FIXTURES}mixed-host/lspci.txt`, "utf8"));
    expect(listing.devices).toHaveLength(28);
    expect(listing.malformed).toEqual([]);
  });

  it("keeps malformed lines apart and ignores blank ones", () => {
    const listing = parseLspci(readFileSync(`${FIXTURES}malformed/lspci.txt`, "utf8"));
    expect(listing.devices.map((d) => d.address)).toEqual([
      "0000:00:00.0",
      "0000:3b:00.0",
      "0000:86:00.0",
      "0000:af:00.0",
      "0000:d8:00.0",
      "0000:d9:00.0",
      "0000:d9:00.1",
    ]);
    expect(listing.malformed).toHaveLength(5);
  });
});
