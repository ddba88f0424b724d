/**
 * The shell examples of README.md and docs/, as the docs runner takes them: every ```sh (or bash,
 * shell) block, in the order a reader follows them, each one starting from the state the one before
 * left. A block not meant to run here says so just above it, with its reason:
 *
 *     <!-- example: skip (needs a real GPU) -->
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface Example {
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  code: string;
  /** Why it does not run here; undefined when it runs. */
  skip?: string;
}

/** The files with shell examples, in the order they run: each starts where the one before ended. */
export const ORDER = ["README.md", "docs/audit.md", "docs/fpga-programming.md", "docs/os-acc.md", "docs/rest-api.md", "docs/drivers.md", "docs/placement.md", "docs/deployment.md", "docs/operations.md"];

const SHELL = new Set(["sh", "bash", "shell"]);
const SKIP = /^<!--\s*example:\s*skip\s*\((.+)\)\s*-->$/;

/** The shell blocks of one markdown file, with their skip reasons. */
export function shellBlocks(file: string, text: string): Example[] {
  const lines = text.split("\n");
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that never ends`);
    if (SHELL.has(open[1]!)) {
      let k = i - 1;
      while (k >= 0 && lines[k]!.trim() === "") k--;
      const marker = k >= 0 ? SKIP.exec(lines[k]!.trim()) : null;
      out.push({ file, line: i + 1, code: lines.slice(i + 1, end).join("\n") + "\n", skip: marker?.[1] });
    }
    i = end;
  }
  return out;
}

/** Every shell example of the repository at `root`, in ORDER. */
export function allExamples(root: string): Example[] {
  return ORDER.flatMap((file) => shellBlocks(file, readFileSync(join(root, file), "utf8")));
}

/** Markdown files that hold a shell block but are not in ORDER (their examples would never run). */
export function unordered(root: string): string[] {
  const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  return files.filter((f) => !ORDER.includes(f) && shellBlocks(f, readFileSync(join(root, f), "utf8")).length > 0);
}

/** Untagged blocks that read as commands to run: they should be ```sh (and run) or say what they are. */
export function untaggedCommands(root: string): string[] {
  const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const found: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\S*)\s*$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
      if (open[1] === "" && /^(\$ |cyborg-es |node |npm |curl |openstack )/.test(lines[i + 1] ?? "")) found.push(`${file}:${i + 1}`);
      i = end < 0 ? lines.length : end;
    }
  }
  return found;
}

/**
 * A bash script running `example` after restoring the variables and functions the examples before
 * it defined (from `state`), and saving its own for the next. `baseline` lists bash's own names.
 */
export function scriptFor(example: Example, state: string, baseline: string): string {
  return [
    `[ -f ${state} ] && source ${state}`,
    // What an example started in the background and did not stop (it failed first) stops with it.
    "trap 'pkill -P $$ 2>/dev/null || true' EXIT",
    "trap 'exit 143' TERM",
    "set -euo pipefail",
    example.code,
    "set +u",
    `{ declare -p $(compgen -v | grep -vxF -f ${baseline}) 2>/dev/null; declare -f; } > ${state}.next && mv ${state}.next ${state}`,
  ].join("\n");
}
