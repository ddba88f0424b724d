/** What the agent runs to read devices' health, host-wide (the driver environment carries them). */
/** The host-wide sources, run at most once a pass; absent ones are not read. */
export interface HealthSources {
  /** `nvidia-smi -q -x`: its output, with any "Unable to determine the device handle" lines it wrote. */
  nvidiaSmi?: () => Promise<string>;
  /** The kernel log (`dmesg`), for NVIDIA's XID lines. */
  kernelLog?: () => Promise<string>;
  /** OPAE's `fpgainfo errors all`, for Intel FPGAs' error registers; null when fpgainfo is not installed. */
  fpgainfoErrors?: () => Promise<string | null>;
}
