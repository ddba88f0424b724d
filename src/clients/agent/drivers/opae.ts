/** OPAE's `fpgaconf` loads a green bitstream into a PAC's region (cyborg-reference 5.6): programming and cleaning use it. */
export const FPGACONF = "/usr/bin/fpgaconf";
