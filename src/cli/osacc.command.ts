import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { OsAcc, OsAccError } from "../clients/osacc/index.js";

/**
 * os-acc on the command line, for hypervisor hooks in any language: each call reads its JSON
 * argument (--json, or stdin) and prints its JSON answer; an error prints {"error": {code,
 * message, field}} and exits with status 1.
 */
export function osaccCommand(): Command {
  const cmd = new Command("os-acc")
    .description("attach accelerators to instances from a compute node (os-acc): JSON in, JSON out")
    .addOption(new Option("--url <url>", "the service's GraphQL endpoint").env("CYBORG_URL").default("http://127.0.0.1:4000/graphql"))
    .addOption(new Option("--token <token>", "a service token (the compute service's)").env("CYBORG_TOKEN"))
    .addOption(new Option("--hostname <name>", "this compute node's name, as its agent reports it").env("CYBORG_HOSTNAME"));

  const run = (name: string, description: string, usage: string, call: (acc: OsAcc, input: Record<string, any>) => Promise<unknown>) =>
    cmd
      .command(name)
      .description(`${description}; input: ${usage}`)
      .option("--json <json>", "the input (default: read from stdin)")
      .action(async (o: { json?: string }) => {
        const g = cmd.opts<{ url: string; token?: string; hostname?: string }>();
        const acc = new OsAcc({ url: g.url, token: g.token ?? "", hostname: g.hostname });
        try {
          if (!g.token) throw new OsAccError("UNAUTHENTICATED", "no token: pass --token or set CYBORG_TOKEN (a service token)");
          const result = await call(acc, parseInput(o.json ?? readFileSync(0, "utf8")));
          console.log(JSON.stringify(result ?? null, null, 2));
        } catch (err) {
          const e = err instanceof OsAccError ? err.toJSON() : { code: "ERROR", message: (err as Error).message };
          console.log(JSON.stringify({ error: e }, null, 2));
          process.exitCode = 1;
        } finally {
          await acc.close();
        }
      });

  run("initialize", "wait until this host's agent has reported its inventory", '{"hostname"?, "timeoutMs"?}', async (acc, i) => {
    await acc.initialize(i.hostname, { timeoutMs: i.timeoutMs });
    return { ready: true };
  });
  run("plug", "create, bind and wait for an instance's accelerators; prints what to attach", '{"instance": {"uuid", "project"?}, "selectedRp": {"uuid", "hostname"?}, "extraSpecs": {...}}', (acc, i) =>
    acc.plug(i.instance, i.selectedRp, i.extraSpecs),
  );
  run("unplug", "release every accelerator of an instance; prints how many", '{"instance": {"uuid"}}', async (acc, i) => ({ released: await acc.unplug(i.instance) }));
  run("operation", "record an instance operation (pause, shelve, resize, ...) and do what it asks", '{"instance", "operation", "target"?: {"selectedRp", "extraSpecs"}}', (acc, i) =>
    acc.operation(i.instance, i.operation, i.target),
  );
  return cmd;
}

function parseInput(text: string): Record<string, any> {
  try {
    const value = JSON.parse(text.trim() === "" ? "{}" : text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("not an object");
    return value;
  } catch (err) {
    throw new OsAccError("BAD_USER_INPUT", `the input must be a JSON object: ${(err as Error).message}`);
  }
}
