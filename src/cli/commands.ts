import type { Command } from "commander";
import { serveModule } from "./serve-module.js";

/**
 * The commands, in the order help lists them. Each is loaded only when it runs (or help lists
 * them all): a command starts without the modules of the others (the agent without the server's,
 * the server without the audit tools').
 */
export const COMMANDS: ReadonlyArray<[name: string, load: () => Promise<Command>]> = [
  ["serve", async () => (await serveModule()).serveCommand()],
  ["agent", async () => (await import("./agent.command.js")).agentCommand()],
  ["os-acc", async () => (await import("./osacc.command.js")).osaccCommand()],
  ["bitstream", async () => (await import("./bitstream.command.js")).bitstreamCommand()],
  ["profile", async () => (await import("./profile.command.js")).profileCommand()],
  ["device", async () => (await import("./device.command.js")).deviceCommand()],
  ["quota", async () => (await import("./quota.command.js")).quotaCommand()],
  ["projections", async () => (await import("./projections.command.js")).projectionsCommand()],
  ["place", async () => (await import("./scheduling.command.js")).placeCommand()],
  ["explain", async () => (await import("./scheduling.command.js")).explainCommand()],
  ["capacity", async () => (await import("./scheduling.command.js")).capacityCommand()],
  ["placement", async () => (await import("./placement.command.js")).placementCommand()],
  ["schema", async () => (await import("./schema.command.js")).schemaCommand()],
  ["audit", async () => (await import("./audit.command.js")).auditCommand()],
  ["replay", async () => (await import("./replay.command.js")).replayCommand()],
];
