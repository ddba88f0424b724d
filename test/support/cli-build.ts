/**
 * The command line as a user runs it (`cyborg-es ...`), for tests that spawn it: src/ and
 * projections/ transpiled with SWC (the decorator metadata type-graphql needs, as vitest does)
 * into a temporary directory whose node_modules links to ours. A second or so, once per test file.
 */
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { transformFile } from "@swc/core";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

export interface BuiltCli {
  /** argv[0..1] of `cyborg-es`: node and the transpiled src/cli/index.js. */
  argv: string[];
  remove(): Promise<void>;
}

export async function buildCli(): Promise<BuiltCli> {
  const out = await mkdtemp(join(tmpdir(), "cyborg-es-cli-"));
  const files = [...(await sources(join(repo, "src"))), ...(await sources(join(repo, "projections")))];
  await Promise.all(
    files.map(async (file) => {
      const { code } = await transformFile(file, {
        jsc: {
          parser: { syntax: "typescript", decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          target: "es2022",
        },
        module: { type: "es6" },
      });
      const dest = join(out, relative(repo, file)).replace(/\.ts$/, ".js");
      await mkdir(dirname(dest), { recursive: true });
      await writeFile(dest, code);
    }),
  );
  await writeFile(join(out, "package.json"), JSON.stringify({ type: "module" }));
  await symlink(join(repo, "node_modules"), join(out, "node_modules"), "dir");
  return { argv: [process.execPath, join(out, "src/cli/index.js")], remove: () => rm(out, { recursive: true, force: true }) };
}
