import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat
 * (Linux); null elsewhere. bench:osacc divides the server's share by the cycles.
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

/**
 * CPU seconds the threads of a process named `name` (their /proc comm) have used so far: 0 when
 * none has that name, null elsewhere. V8's CPU profiler processes its samples on a thread of its
 * own, `v8:ProfEvntProc`: the profiler's cost, not the profiled program's.
 */
export function namedThreadsCpuSeconds(pid: number, name: string): number | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  let sum = 0;
  for (const tid of tids) {
    let comm: string;
    try {
      comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
    } catch {
      continue; // the thread ended
    }
    if (comm === name) sum += cpuSecondsOf(`/proc/${pid}/task/${tid}/stat`) ?? 0;
  }
  return sum;
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

/**
 * CPU time a process and its children (the API workers) have used so far, in ms (Linux:
 * /proc/<pid>/stat utime + stime of each), or null: a server's CPU as serverCpu (server-profile.ts) reads it.
 */
export function processTreeCpuMs(pid: number | undefined): number | null {
  const own = pid === undefined ? null : processCpuSeconds(pid);
  if (own === null) return null;
  let children: string[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean);
  } catch {
    return null;
  }
  return children.reduce((sum, child) => sum + (processTreeCpuMs(Number(child)) ?? 0), own * 1000);
}

/** A `--server-pid` value: a server on this machine whose CPU /proc shows; a value that names no such process is refused. */
export function serverPidOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const pid = Number(value);
  if (!Number.isInteger(pid) || pid <= 0 || processCpuSeconds(pid) === null) {
    throw new Error(`--server-pid ${value}: no process of that id on this machine whose CPU /proc shows`);
  }
  return pid;
}
