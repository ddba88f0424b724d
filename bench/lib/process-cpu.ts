import { readFileSync } from "node:fs";

/**
 * CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat
 * (Linux); null elsewhere. bench:osacc and bench:rest divide the server's share by the flows.
 */
export function processCpuSeconds(pid: number): number | null {
  return cpuSecondsOf(`/proc/${pid}/stat`);
}

/**
 * CPU seconds one thread of a process has used so far (`tid`: the main thread by default, whose
 * id is the process's), from /proc/<pid>/task/<tid>/stat; null elsewhere. A server whose main
 * thread is busy nearly all the time is bound by it, whatever its other threads do.
 */
export function threadCpuSeconds(pid: number, tid = pid): number | null {
  return cpuSecondsOf(`/proc/${pid}/task/${tid}/stat`);
}

function cpuSecondsOf(file: string): number | null {
  try {
    const stat = readFileSync(file, "utf8");
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
