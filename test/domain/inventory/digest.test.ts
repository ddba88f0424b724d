import { describe, expect, it } from "vitest";
import { reportDigest, validateDigest } from "../../../src/domain/inventory/digest.js";
import { expectDomainError } from "../decider-spec.js";
import { deployable, fpga, pci } from "./fixtures.js";

const host = () => [fpga("af", { handles: 2 }), fpga("b0")];

describe("report digest", () => {
  it("is v1: and a SHA-256 in hex, the same for the same report", () => {
    expect(reportDigest(host())).toMatch(/^v1:[0-9a-f]{64}$/);
    expect(reportDigest(host())).toBe(reportDigest(host()));
    expect(reportDigest([])).toMatch(/^v1:[0-9a-f]{64}$/);
  });

  it("does not change with key order, PCI address spelling or omitted optional fields", () => {
    const [af, b0] = host();
    const reordered = Object.fromEntries(Object.entries(af!).reverse());
    const spelled = {
      ...b0!,
      controlPath: { type: "PCI", info: { function: "0", device: "0x00", bus: "B0", domain: "0" } },
      deployables: [{ ...deployable("b0"), attachHandles: [{ type: "PCI", info: { domain: "0000", bus: "0xb0", device: "0", function: "0" } }] }],
    };
    const { vendorBoardInfo: _, ...withoutNullable } = b0!;
    expect(reportDigest([reordered, spelled])).toBe(reportDigest(host()));
    expect(reportDigest([af, { ...withoutNullable, stub: false }])).toBe(reportDigest(host()));
    const board = (info: object) => reportDigest([af, { ...b0!, stdBoardInfo: info }]);
    expect(board({ product_id: "09c4", nested: { a: 1, b: [2] } })).toBe(board({ nested: { b: [2], a: 1 }, product_id: "09c4" }));
  });

  it("changes when anything the diff reads changes", () => {
    const base = reportDigest(host());
    const [af, b0] = host();
    const variants = [
      [af, { ...b0!, vendor: "0x1172" }],
      [af, { ...b0!, vendorBoardInfo: { firmware: "2.0" } }],
      [af, { ...b0!, stub: true }],
      [af, { ...b0!, deployables: [deployable("b0", { handles: 2 })] }],
      [af, { ...b0!, deployables: [{ ...deployable("b0"), numAccelerators: 4 }] }],
      [af, { ...b0!, deployables: [{ ...deployable("b0"), driverName: "xilinx" }] }],
      [af, { ...b0!, deployables: [{ ...deployable("b0"), attributes: [{ key: "rc", value: "FPGA" }] }] }],
      [af, { ...b0!, deployables: [{ ...deployable("b0"), attachHandles: [{ type: "MDEV", info: pci("b0") }] }] }],
      [af],
    ];
    const digests = variants.map((v) => reportDigest(v));
    for (const d of digests) expect(d).not.toBe(base);
    expect(new Set(digests).size).toBe(digests.length);
  });

  it("refuses what validateReport refuses", () => {
    expectDomainError(() => reportDigest([{ ...fpga("af"), type: "TPU" }]), "BAD_USER_INPUT", "devices[0].type");
    expectDomainError(() => reportDigest("x"), "BAD_USER_INPUT", "devices");
  });

  it("validates a digest's form, answering it in lower case", () => {
    const d = reportDigest(host());
    expect(validateDigest(d)).toBe(d);
    expect(validateDigest(d.toUpperCase())).toBe(d);
    for (const bad of ["", "v1:", d.slice(0, -1), d + "0", "v2:" + d.slice(3), d.replace(/.$/, "g"), 3, null]) {
      expectDomainError(() => validateDigest(bad), "BAD_USER_INPUT", "digest");
    }
  });
});
