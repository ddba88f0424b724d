/** `cyborg-es bitstream upload|list|delete`: the bitstream catalogue from the command line (admin token). */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { Readable } from "node:stream";
import { Command, Option } from "commander";
import { postGraphQL } from "../clients/agent/graphql-client.js";

const FIELDS = "id name functionId functionName regionType vendor checksum size createdAt";

function withService(cmd: Command): Command {
  return cmd
    .addOption(new Option("--url <url>", "the service's GraphQL endpoint").env("CYBORG_URL").default("http://127.0.0.1:4000/graphql"))
    .addOption(new Option("--token <token>", "an admin token").env("CYBORG_TOKEN"));
}

const client = (o: { url: string; token?: string }) => {
  if (!o.token) throw new Error("no token: pass --token or set CYBORG_TOKEN (an admin token)");
  return { url: o.url, token: o.token };
};

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
      .action(async (file: string, o: { url: string; token?: string; name?: string; functionId?: string; functionName?: string; regionType?: string; vendor?: string }) => {
        const c = client(o);
        const { size } = await stat(file);
        const q = new URLSearchParams({ name: o.name ?? basename(file) });
        for (const [k, v] of Object.entries({ functionId: o.functionId, functionName: o.functionName, regionType: o.regionType, vendor: o.vendor })) if (v) q.set(k, v);
        const res = await fetch(new URL(`/bitstreams?${q}`, c.url), {
          method: "POST",
          headers: { authorization: `Bearer ${c.token}`, "content-type": "application/octet-stream", "content-length": String(size) },
          body: Readable.toWeb(createReadStream(file)) as unknown as RequestInit["body"],
          duplex: "half",
        } as RequestInit & { duplex: "half" });
        const body = (await res.json()) as { errors?: Array<{ message: string }> };
        if (!res.ok) throw new Error(`upload refused (HTTP ${res.status}): ${body.errors?.[0]?.message ?? JSON.stringify(body)}`);
        console.log(JSON.stringify(body, null, 2));
      }),
  );

  cmd.addCommand(
    withService(new Command("list"))
      .description("list the catalogue")
      .option("--json", "print JSON instead of a table", false)
      .action(async (o: { url: string; token?: string; json: boolean }) => {
        const { bitstreams } = await postGraphQL<{ bitstreams: Array<Record<string, unknown>> }>(client(o), `{ bitstreams { ${FIELDS} } }`, {});
        if (o.json) return console.log(JSON.stringify(bitstreams, null, 2));
        if (bitstreams.length) console.table(bitstreams.map(({ checksum, createdAt: _, ...b }) => ({ ...b, checksum: String(checksum).slice(0, 19) + "..." })));
        else console.log("no bitstreams");
      }),
  );

  cmd.addCommand(
    withService(new Command("delete"))
      .description("remove a bitstream (refused while a region runs it or a profile names it)")
      .argument("<id>", "the bitstream's id")
      .action(async (id: string, o: { url: string; token?: string }) => {
        await postGraphQL(client(o), "mutation($id: ID!) { deleteBitstream(id: $id) }", { id });
        console.log(`deleted ${id}`);
      }),
  );
  return cmd;
}
