import { describe, expect, it } from "vitest";
import { hostDriverEnv, lspciKRunner, lspciRunner, runCommand } from "../../../src/clients/agent/drivers/host-commands.js";

describe("host commands", () => {
  it("says to install pciutils when lspci is missing", async () => {
    await expect(lspciRunner("/nonexistent/bin/lspci -nnn -D")()).rejects.toThrow(
      "/nonexistent/bin/lspci not found: install pciutils (apt-get install pciutils / dnf install pciutils)",
    );
  });

  it("runs a command without a shell and returns its output (canned output via cat)", async () => {
    const out = await lspciRunner(`cat ${new URL("../../fixtures/mixed-host/lspci.txt", import.meta.url).pathname}`)();
    expect(out.split("\n")[0]).toBe("0000:00:00.0 Host bridge [0600]: Intel Corporation Sky Lake-E DMI3 Registers [8086:2020] (rev 04)");
  });

  it("reports a failing command with its exit code and stderr", async () => {
    await expect(runCommand(["sh", "-c", "echo boom >&2; exit 3"])).rejects.toThrow("sh -c echo boom >&2; exit 3 failed (exit 3): boom");
  });

  it("says what a failing tool printed on stdout when its stderr is empty (nvidia-smi)", async () => {
    await expect(runCommand(["sh", "-c", "echo 'GPU 00000000:3B:00.0: In use by another client'; exit 255"])).rejects.toThrow(/failed \(exit 255\): GPU 00000000:3B:00.0: In use by another client/);
  });

  it("refuses to pass anything but a PCI address to lspci -s", async () => {
    await expect(lspciKRunner()("0000:af:00.0; rm -rf /")).rejects.toThrow(/not a PCI address/);
  });

  it("builds a host env with /sys by default", () => {
    const env = hostDriverEnv({ hostname: "compute1", config: {} });
    expect(env.sysfsRoot).toBe("/sys");
    expect(env.hostname).toBe("compute1");
  });
});
