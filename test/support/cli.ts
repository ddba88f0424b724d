/**
 * The `cyborg-es` command as a user runs it, for tests that spawn it: src/ and projections/
 * transpiled with SWC (decorator metadata included, as type-graphql needs) into a temporary
 * directory that resolves this repo's node_modules. About a second; no `npm run build` needed.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { transformFile } from "@swc/core";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(path)));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

export interface BuiltCli {
  /** The entry point: `node <cli> <command> ...`. */
  cli: string;
  remove(): Promise<void>;
}

export async function buildCli(): Promise<BuiltCli> {
  const outDir = await mkdtemp(join(tmpdir(), "cyborg-es-cli-"));
  const files = [...(await sources(join(repo, "src"))), ...(await sources(join(repo, "projections")))];
  await Promise.all(
    files.map(async (file) => {
      const { code } = await transformFile(file, {
        jsc: {
          parser: { syntax: "typescript", decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: "es2022",
          keepClassNames: true,
        },
        module: { type: "es6" },
      });
      const out = join(outDir, relative(repo, file)).replace(/\.ts$/, ".js");
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, code);
    }),
  );
  await writeFile(join(outDir, "package.json"), JSON.stringify({ type: "module" }));
  await symlink(join(repo, "node_modules"), join(outDir, "node_modules"), "dir");
  return { cli: join(outDir, "src/cli/index.js"), remove: () => rm(outDir, { recursive: true, force: true }) };
}

/** Runs the command to its end with `input` on stdin; resolves with its exit code and output. */
export function runCli(cli: string, args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}
