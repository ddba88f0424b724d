import { writeFileSync } from "node:fs";
import { Command } from "commander";
import { printedSchema } from "../api/graphql/schema.js";

export function schemaCommand(): Command {
  return new Command("schema")
    .description("print the GraphQL schema (SDL), or write it with --write")
    .option("--write <file>", "write it to a file, e.g. schema/schema.graphql")
    .action(async (opts: { write?: string }) => {
      const sdl = await printedSchema();
      if (opts.write) {
        writeFileSync(opts.write, sdl);
        console.error(`wrote ${opts.write}`);
      } else process.stdout.write(sdl);
    });
}
