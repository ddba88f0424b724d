import { writeFileSync } from "node:fs";
import { Command } from "commander";

export function schemaCommand(): Command {
  return new Command("schema")
    .description("print the GraphQL schema (SDL), or write it with --write")
    .option("--write <file>", "write it to a file, e.g. schema/schema.graphql")
    .action(async (opts: { write?: string }) => {
      const { printedSchema } = await import("../api/graphql/schema.js");
      const sdl = await printedSchema();
      if (opts.write) {
        writeFileSync(opts.write, sdl);
        console.error(`wrote ${opts.write}`);
      } else process.stdout.write(sdl);
    });
}
