/**
 * `cyborg-es quota show|set`: a project's quota limits and usage (docs/quotas.md), from the command
 * line (an admin token to set them). It speaks GraphQL to the service, as any client does.
 */
import { Command } from "commander";
import { callService, serviceClient, withService as serviceOptions } from "./service-options.js";
import { printTable } from "./table.js";

const FIELDS = "projectId claims classes { resourceClass limit own usage }";

interface QuotaOut {
  projectId: string;
  claims: number;
  classes: Array<{ resourceClass: string; limit: number | null; own: boolean; usage: number }>;
}

const withService = (cmd: Command) => serviceOptions(cmd, "any");
const client = (cmd: Command) => serviceClient(cmd, "any");

export function quotaCommand(): Command {
  const cmd = new Command("quota").description("project quotas: limits per resource class, and usage");
  for (const sub of [showCommand(), setCommand()]) cmd.addCommand(sub);
  return cmd;
}

function print(q: QuotaOut, json: boolean): void {
  if (json) return console.log(JSON.stringify(q, null, 2));
  const rows = q.classes.map((c) => ({ class: c.resourceClass, usage: c.usage, limit: c.limit ?? "none", from: c.own ? "project" : "default" }));
  printTable(rows, `project ${q.projectId}: no limits, no usage`);
}

function showCommand(): Command {
  return withService(new Command("show"))
    .description("a project's limits and usage (a project's token: its own)")
    .argument("<projectId>")
    .option("--json", "print JSON instead of a table", false)
    .action(async (projectId: string, o: { json: boolean }, cmd: Command) => {
      const { projectQuota } = await callService<{ projectQuota: QuotaOut }>(client(cmd), `query($p: String!) { projectQuota(projectId: $p) { ${FIELDS} } }`, { p: projectId });
      print(projectQuota, o.json);
    });
}

/** `GPU=8` sets a limit; `GPU=default` puts the class back on the service's default. */
export function parseLimit(arg: string): { resourceClass: string; limit: number | null } {
  const m = /^([^=]+)=(default|\d+)$/.exec(arg);
  if (!m) throw new Error(`${JSON.stringify(arg)}: give CLASS=N (e.g. GPU=8) or CLASS=default`);
  return { resourceClass: m[1]!, limit: m[2] === "default" ? null : Number(m[2]) };
}

function setCommand(): Command {
  return withService(new Command("set"))
    .description("set a project's limits (admin): CLASS=N, or CLASS=default to follow the default again; ARQS is the ARQ count")
    .argument("<projectId>")
    .argument("<limits...>", "e.g. GPU=8 FPGA=2 ARQS=default")
    .option("--json", "print JSON instead of a table", false)
    .action(async (projectId: string, limits: string[], o: { json: boolean }, cmd: Command) => {
      const l = limits.map(parseLimit);
      const q = `mutation($p: String!, $l: [QuotaLimitInput!]!) { setProjectQuota(projectId: $p, limits: $l) { ${FIELDS} } }`;
      const { setProjectQuota } = await callService<{ setProjectQuota: QuotaOut }>(client(cmd), q, { p: projectId, l });
      print(setProjectQuota, o.json);
    });
}
