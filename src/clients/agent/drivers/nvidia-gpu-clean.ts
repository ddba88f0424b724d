/**
 * Cleaning an NVIDIA GPU: `nvidia-smi --gpu-reset -i <BDF>` resets the GPU, which also scrubs its
 * memory. nvidia-smi answers "GPU 00000000:1A:00.0 was successfully reset." and exits 0; it
 * refuses a GPU something still holds ("The following GPUs could not be reset: ... In use by
 * another client", exit 255: persistence mode, Fabric Manager, a leftover process).
 */
import type { Cleaner } from "./driver.js";
import { bdfOf, cleanDigest, runClean } from "./clean-step.js";

export const NVIDIA_SMI = "nvidia-smi";

export const nvidiaGpuCleaner: Cleaner = {
  driverNames: ["NVIDIA"],
  command: ({ controlPath }) => [NVIDIA_SMI, "--gpu-reset", "-i", bdfOf(controlPath)],
  async clean(env, target) {
    const command = this.command(target);
    if (env.config.nvidia?.nvidiaSmi) command[0] = env.config.nvidia.nvidiaSmi;
    const answer = await runClean(env, command);
    // Fail closed: an exit 0 without nvidia-smi's word that the GPU was reset is not a clean.
    if (!/was successfully reset/.test(answer)) throw new Error(`${command.join(" ")} did not say the GPU was reset: ${answer.trim() || "(no output)"}`);
    return { command, digest: cleanDigest(command, answer) };
  },
};
