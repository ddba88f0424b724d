#!/usr/bin/env node
import { Command } from "commander";
import { agentCommand } from "./agent.command.js";
import { auditCommand } from "./audit.command.js";
import { osaccCommand } from "./osacc.command.js";
import { placementCommand } from "./placement.command.js";
import { deviceCommand } from "./device.command.js";
import { profileCommand } from "./profile.command.js";
import { bitstreamCommand } from "./bitstream.command.js";
import { projectionsCommand } from "./projections.command.js";
import { replayCommand } from "./replay.command.js";
import { schemaCommand } from "./schema.command.js";
import { serveCommand } from "./serve.command.js";
import { relaunchWithYoungGeneration, wantsYoungGeneration } from "./young-generation.js";

const program = new Command("cyborg-es")
  .description("Accelerator lifecycle service: OpenStack Cyborg as a GraphQL API over an event-sourced backend")
  .showHelpAfterError()
  .enablePositionalOptions();

program.addCommand(serveCommand(), { isDefault: true });
program.addCommand(agentCommand());
program.addCommand(osaccCommand());
program.addCommand(bitstreamCommand());
program.addCommand(profileCommand());
program.addCommand(deviceCommand());
program.addCommand(projectionsCommand());
program.addCommand(placementCommand());
program.addCommand(schemaCommand());
program.addCommand(auditCommand());
program.addCommand(replayCommand());

if (wantsYoungGeneration(process.argv.slice(2), process.execArgv, process.env)) {
  relaunchWithYoungGeneration();
} else {
  program.parseAsync(process.argv).catch((err: Error) => {
    console.error(`cyborg-es: ${err.message}`);
    process.exit(1);
  });
}
