#!/usr/bin/env node
import { Command } from "commander";
import { COMMANDS } from "./commands.js";
import { relaunchWithYoungGeneration, wantsYoungGeneration } from "./young-generation.js";

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  // Before anything is loaded: the process that relaunches itself does nothing else.
  if (args.length > 0 && wantsYoungGeneration(args, process.execArgv, process.env)) return relaunchWithYoungGeneration();
  const program = new Command("cyborg-es")
    .description("Accelerator lifecycle service: OpenStack Cyborg as a GraphQL API over an event-sourced backend")
    .showHelpAfterError()
    .enablePositionalOptions();
  // The command named first, when it is one of ours; otherwise (help, a typo) every command, so help and suggestions list them all.
  const named = COMMANDS.find(([name]) => name === args[0]);
  for (const [, load] of named ? [named] : COMMANDS) program.addCommand(await load());
  // No command: say what there is, and start nothing (`serve` runs the service).
  if (args.length === 0) program.outputHelp();
  else await program.parseAsync(process.argv);
}

main().catch((err: Error) => {
  console.error(`cyborg-es: ${err.message}`);
  process.exit(1);
});
