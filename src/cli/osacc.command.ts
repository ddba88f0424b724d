import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { OsAcc, OsAccError } from "../clients/osacc/index.js";
import { explainRefusal, serviceClient, withService } from "./service-options.js";

/**
 * os-acc on the command line, for hypervisor hooks in any language: each call reads its JSON
 * argument (--json, or stdin) and prints its JSON answer; an error prints {"error": {code,
 * message, field}} and exits with status 1.
 */
export function osaccCommand(): Command {
  const cmd = withService(new Command("os-acc"), "service")
    .description("attach accelerators to instances from a compute node (os-acc): JSON in, JSON out")
    .addOption(new Option("--hostname <name>", "this compute node's name, as its agent reports it").env("CYBORG_HOSTNAME"));

  const run = (name: string, description: string, usage: string, call: (acc: OsAcc, input: Record<string, any>) => Promise<unknown>) =>
    cmd
      .command(name)
      .description(`${description}; input: ${usage}`)
      .option("--json <json>", "the input (default: read from stdin)")
      .action(async (o: { json?: string }) => {
        const g = cmd.opts<{ url: string; hostname?: string }>();
        let acc: OsAcc | undefined;
        try {
          const client = (() => {
            try {
              return serviceClient(cmd, "service");
            } catch (err) {
              throw new OsAccError("UNAUTHENTICATED", (err as Error).message);
            }
          })();
          acc = new OsAcc({ url: client.url, token: client.token, hostname: g.hostname });
          const result = await call(acc, parseInput(o.json ?? readFileSync(0, "utf8")));
          console.log(JSON.stringify(result ?? null, null, 2));
        } catch (err) {
          const refused = err instanceof OsAccError && err.code === "UNAUTHENTICATED" && acc !== undefined;
          const e = refused
            ? { code: "UNAUTHENTICATED", message: explainRefusal(err, { url: g.url, role: "service" }).message }
            : err instanceof OsAccError
              ? err.toJSON()
              : { code: "ERROR", message: (err as Error).message };
          console.log(JSON.stringify({ error: e }, null, 2));
          process.exitCode = 1;
        } finally {
          await acc?.close();
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
