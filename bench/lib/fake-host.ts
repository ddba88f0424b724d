/** A host report with one fake FPGA of `handles` TEST_PCI handles, named after the host (for the benchmarks). */
export function fakeHost(hostname: string, handles: number) {
  return [
    {
      type: "FPGA",
      vendor: "0xABCD",
      model: "bench",
      controlPath: { type: "PCI", info: { domain: "0000", bus: "0c", device: "00", function: "0" } },
      deployables: [
        {
          name: `${hostname}_FakeDevice`,
          numAccelerators: handles,
          driverName: "fake",
          attributes: [{ key: "rc", value: "FPGA" }, { key: "trait0", value: "CUSTOM_FAKE_DEVICE" }],
          attachHandles: Array.from({ length: handles }, (_, i) => ({
            type: "TEST_PCI",
            info: { domain: "0000", bus: "0c", device: (i >> 3).toString(16).padStart(2, "0"), function: String(i & 7) },
          })),
        },
      ],
    },
  ];
}
