/** OPAE's `fpgaconf` loads a green bitstream into a PAC's region (cyborg-reference 5.6): programming and cleaning use it. */
export const FPGACONF = "/usr/bin/fpgaconf";
/** OPAE's `fpgainfo` (on the agent's PATH): its `errors all` is where an Intel FPGA's health is read (health/fpgainfo.ts). */
export const FPGAINFO = "fpgainfo";
