/**
 * Tables for people: a header of the column names in capitals, columns padded to their widest
 * value, no index column and no quotes (unlike console.table). Machines ask for --json instead.
 */
export type Row = Record<string, unknown>;

const cell = (v: unknown): string => (v === null || v === undefined || v === "" ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v));

export function formatTable(rows: readonly Row[], columns: readonly string[] = [...new Set(rows.flatMap((r) => Object.keys(r)))]): string {
  const header = columns.map((c) => c.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase());
  const body = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((_, i) => Math.max(header[i]!.length, ...body.map((line) => line[i]!.length)));
  return [header, ...body].map((line) => line.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

/** Prints `rows` as a table, or `empty` when there are none. */
export function printTable(rows: readonly Row[], empty: string): void {
  console.log(rows.length ? formatTable(rows) : empty);
}
