import { readFileSync } from "node:fs";

/**
 * CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat
 * (Linux); null elsewhere. bench:osacc and bench:rest divide the server's share by the flows.
 */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
