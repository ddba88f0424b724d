/**
 * Intel FPGA error registers from OPAE's `fpgainfo errors all` (opae-sdk, tools/fpgainfo/errors.c):
 * one section per FME and per port (a header line of asterisks around "FME ERRORS" or "PORT
 * ERRORS", between double slashes), each naming its PCI function (`PCIe s:b:d.f : 0000:5E:00.0`, or `Bus`, `Device`,
 * `Function` lines in the older tool), then one `<Register> : 0x<value>` line per error register,
 * each set bit spelled out under it (`bit 9 error:Catastrophic CRC error detected.`, or a tabbed
 * line in older releases). A nonzero register is a reason; the latches that repeat another
 * register (`First Error`, `Next Error`, `First Malformed Req`) and the injection control
 * (`Inject Error`) are not.
 */
import { worstStatus, type HealthStatus } from "../../../../domain/inventory/health.js";
import { reason, type HealthPart } from "./part.js";

interface Register {
  code: string;
  status: HealthStatus;
  what: string;
}

/** The registers read, by section and by the name fpgainfo prints (lower case). */
const REGISTERS: Record<"FME" | "PORT", Record<string, Register>> = {
  FME: {
    errors: { code: "FPGA_FME_ERRORS", status: "CRITICAL", what: "FPGA management engine errors" },
    "catfatal errors": { code: "FPGA_CATFATAL", status: "CRITICAL", what: "catastrophic or fatal FPGA errors" },
    "nonfatal errors": { code: "FPGA_NONFATAL", status: "WARNING", what: "non-fatal FPGA errors" },
    "pcie0 errors": { code: "FPGA_PCIE_ERRORS", status: "WARNING", what: "FPGA PCIe link 0 errors" },
    "pcie1 errors": { code: "FPGA_PCIE_ERRORS", status: "WARNING", what: "FPGA PCIe link 1 errors" },
  },
  PORT: {
    errors: { code: "FPGA_PORT_ERRORS", status: "CRITICAL", what: "accelerator port errors (the port stops until reset)" },
  },
};

const SECTION = /^\/\/\*+ (FME|PORT) ERRORS \*+\/\/\s*$/;
const FIELD = /^([A-Za-z][A-Za-z0-9 .:]*?)\s+:\s+(.*?)\s*$/;
const BIT_LINE = /^bit (\d+) error:\s*(.*)$/;

/** What one section says: its PCI function's slot ("0000:5e:00") and its nonzero registers. */
interface Section {
  kind: "FME" | "PORT";
  fields: Map<string, string>;
  set: Array<{ register: Register; name: string; value: bigint; bits: string[] }>;
}

const hexField = (s: Section, name: string) => {
  const v = s.fields.get(name);
  return v && /^0x[0-9a-f]+$/i.test(v) ? Number.parseInt(v, 16) : null;
};

/** "0000:5e:00" from `PCIe s:b:d.f`, or from `Segment`/`Bus`/`Device` (older fpgainfo). */
function slotOf(s: Section): string | null {
  const sbdf = s.fields.get("pcie s:b:d.f")?.match(/^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.[0-7]$/i);
  if (sbdf) return `${sbdf[1]}:${sbdf[2]}:${sbdf[3]}`.toLowerCase();
  const [bus, device] = [hexField(s, "bus"), hexField(s, "device")];
  if (bus === null || device === null) return null;
  const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
  return `${hex(hexField(s, "segment") ?? 0, 4)}:${hex(bus, 2)}:${hex(device, 2)}`;
}

function parseSections(text: string): Section[] {
  const sections: Section[] = [];
  let current: Section | null = null;
  let last: Section["set"][number] | null = null;
  for (const raw of text.split("\n")) {
    const header = raw.match(SECTION);
    if (header) {
      sections.push((current = { kind: header[1] as "FME" | "PORT", fields: new Map(), set: [] }));
      last = null;
      continue;
    }
    if (!current) continue;
    const line = raw.trim().replace(/\s+/g, " ");
    const bit = line.match(BIT_LINE);
    const field = bit ? null : raw.match(FIELD);
    if (field) {
      const name = field[1]!.toLowerCase();
      current.fields.set(name, field[2]!);
      const register = REGISTERS[current.kind][name];
      const value = /^0x[0-9a-f]+$/i.test(field[2]!) ? BigInt(field[2]!) : BigInt(0);
      last = register && value !== BigInt(0) ? { register, name: field[1]!, value, bits: [] } : null;
      if (last) current.set.push(last);
    } else if (last && line) {
      // Older releases print the set bits' meaning as tabbed lines, newer ones as `bit N error:...`.
      last.bits.push(bit ? bit[2]! : line);
    }
  }
  return sections;
}

const bitsSet = (v: bigint) => v.toString(2).split("").filter((b) => b === "1").length;

/** The health each card's registers say, by PCI slot ("0000:5e:00": the FME's and its ports' functions share it). */
export function parseFpgainfoErrors(text: string): Map<string, HealthPart> {
  const parts = new Map<string, HealthPart>();
  for (const s of parseSections(text)) {
    const slot = slotOf(s);
    if (!slot) continue;
    const part = parts.get(slot) ?? { status: "OK" as HealthStatus, reasons: [] };
    for (const { register, name, value, bits } of s.set) {
      const meaning = bits.length > 0 ? `: ${bits.join(" ")}` : "";
      part.reasons.push(reason(register.code, `${register.what} (${s.kind} ${name} 0x${value.toString(16).toUpperCase()})${meaning}`, bitsSet(value)));
      part.status = worstStatus(part.status, register.status);
    }
    parts.set(slot, part);
  }
  return parts;
}
