/**
 * Prints the bytes the data of an LMDB environment's named databases takes (its pages in use; the
 * file also holds free pages LMDB reuses). Run as its own process: an environment must not be
 * opened twice in one process (LMDB's rule), and the bench measuring a store while it is open
 * would otherwise open it a second time beside the store's own handle.
 *
 *   node dist/bench/lib/lmdb-used-bytes.js DIR
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { open } from "lmdb";

interface PageStats {
  pageSize: number;
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  overflowPages: number;
}

function usedBytesHere(dir: string): number {
  const env = open({ path: dir, maxDbs: 8, readOnly: true });
  try {
    const names = [...env.getKeys()].filter((k): k is string => typeof k === "string");
    let pages = 0;
    let pageSize = 4096;
    for (const name of names) {
      const st = env.openDB({ name }).getStats() as PageStats;
      pageSize = st.pageSize;
      pages += st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages;
    }
    return pages * pageSize;
  } finally {
    void env.close();
  }
}

/** The bytes the named databases of the environment in `dir` use, read by a child process. */
export function lmdbUsedBytes(dir: string): number {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), dir], { encoding: "utf8" });
  return Number(out.trim());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(usedBytesHere(process.argv[2]!));
