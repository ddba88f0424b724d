/** `cyborg-es bitstream upload|list|delete`: the bitstream catalogue from the command line (admin token). */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { Readable } from "node:stream";
import { Command } from "commander";
import { callService, explainRefusal, serviceClient, withService as serviceOptions } from "./service-options.js";
import { printTable } from "./table.js";

const FIELDS = "id name functionId functionName regionType vendor checksum size createdAt";

const withService = (cmd: Command) => serviceOptions(cmd, "admin");
const client = (cmd: Command) => serviceClient(cmd, "admin");

export function bitstreamCommand(): Command {
  const cmd = new Command("bitstream").description("the FPGA bitstream catalogue (embedded, or Glance when the service has GLANCE_URL)");

  cmd.addCommand(
    withService(new Command("upload"))
      .description("upload a bitstream file with its metadata; prints the bitstream (its id is what accel:bitstream_id names)")
      .argument("<file>", "the bitstream")
      .option("--name <name>", "its name (default: the file's name)")
      .option("--function-id <id>", "the function it provides (what accel:function_id names)")
      .option("--function-name <name>", "the function's name")
      .option("--region-type <type>", "the region type it is built for (Intel: the PR interface id)")
      .option("--vendor <vendor>", "intel, xilinx, fake...")
      .action(async (file: string, o: { name?: string; functionId?: string; functionName?: string; regionType?: string; vendor?: string }, cmd: Command) => {
        const c = client(cmd);
        const { size } = await stat(file);
        const q = new URLSearchParams({ name: o.name ?? basename(file) });
        for (const [k, v] of Object.entries({ functionId: o.functionId, functionName: o.functionName, regionType: o.regionType, vendor: o.vendor })) if (v) q.set(k, v);
        const target = new URL(`/bitstreams?${q}`, c.url);
        const res = await fetch(target, {
          method: "POST",
          headers: { authorization: `Bearer ${c.token}`, "content-type": "application/octet-stream", "content-length": String(size) },
          body: Readable.toWeb(createReadStream(file)) as unknown as RequestInit["body"],
          duplex: "half",
        } as RequestInit & { duplex: "half" }).catch((err: Error) => {
          throw new Error(`cannot reach ${target.origin}${target.pathname}: ${err.cause ?? err.message}`);
        });
        const body = (await res.json()) as { errors?: Array<{ message: string; extensions?: { code?: string } }> };
        const first = body.errors?.[0];
        if (res.status === 401 || first?.extensions?.code === "UNAUTHENTICATED") throw explainRefusal({ code: "UNAUTHENTICATED" }, c);
        if (!res.ok) throw new Error(`upload refused (HTTP ${res.status}): ${first?.message ?? JSON.stringify(body)}`);
        console.log(JSON.stringify(body, null, 2));
      }),
  );

  cmd.addCommand(
    withService(new Command("list"))
      .description("list the catalogue")
      .option("--json", "print JSON instead of a table", false)
      .action(async (o: { json: boolean }, cmd: Command) => {
        const { bitstreams } = await callService<{ bitstreams: Array<Record<string, unknown>> }>(client(cmd), `{ bitstreams { ${FIELDS} } }`);
        if (o.json) return console.log(JSON.stringify(bitstreams, null, 2));
        printTable(
          bitstreams.map(({ checksum, createdAt: _, ...b }) => ({ ...b, checksum: String(checksum).slice(0, 19) + "..." })),
          "no bitstreams",
        );
      }),
  );

  cmd.addCommand(
    withService(new Command("delete"))
      .description("remove a bitstream (refused while a region runs it or a profile names it)")
      .argument("<id>", "the bitstream's id")
      .action(async (id: string, _o: unknown, cmd: Command) => {
        await callService(client(cmd), "mutation($id: ID!) { deleteBitstream(id: $id) }", { id });
        console.log(`deleted ${id}`);
      }),
  );
  return cmd;
}
