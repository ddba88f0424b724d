/**
 * `cyborg-es place|explain|capacity`: the placement engine from the command line
 * (docs/scheduling.md). `place` creates a profile's ARQs and binds them where the engine chose;
 * `explain` says per host and provider why a profile (or one ARQ's group, `--arq`) does not fit; `capacity` counts how many more
 * fit, with `--without-host`/`--without-device` for a what-if.
 */
import { Command } from "commander";
import { callService, serviceClient, withService as serviceOptions } from "./service-options.js";
import { printTable } from "./table.js";

const withService = (cmd: Command) => serviceOptions(cmd, "any");
const client = (cmd: Command) => serviceClient(cmd, "any");
const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
const collect = (v: string, prev: string[]) => [...prev, v];

export function placeCommand(): Command {
  return withService(new Command("place"))
    .description("create a profile's ARQs for an instance and bind them where the placement engine chooses")
    .argument("<deviceProfileName>")
    .requiredOption("--instance <uuid>", "the instance the accelerators are for")
    .option("--host <name>", "only this host (repeatable)", collect, [])
    .option("--instance-host <name>", "the instance's host: only there")
    .action(async (name: string, o: { instance: string; host: string[]; instanceHost?: string }, cmd: Command) => {
      const q = `mutation($n: String!, $i: ID!, $h: [String!], $ih: String) { placeAcceleratorRequests(deviceProfileName: $n, instanceUuid: $i, hosts: $h, instanceHost: $ih) {
        hostname alternatives acceleratorRequests { uuid state deviceRpUuid hostname } } }`;
      const { placeAcceleratorRequests } = await callService<{ placeAcceleratorRequests: unknown }>(client(cmd), q, { n: name, i: o.instance, h: o.host.length ? o.host : null, ih: o.instanceHost ?? null });
      print(placeAcceleratorRequests);
    });
}

type RuledOutText = { rule: string; message: string; change: string } | null;
interface ExplainAnswer {
  hosts: number;
  fitting: number;
  byRule: unknown[];
  detail: Array<{ hostname: string; ruledOut: RuledOutText }>;
  acceleratorRequest?: { uuid: string; state: string; hostname: string | null; deviceRpUuid: string | null; deviceProfileName: string; projectId: string | null } | null;
  quota?: { classes: Array<{ resourceClass: string; limit: number | null; usage: number }> } | null;
}

const EXPLANATION = `hosts fitting byRule { rule hosts } detail { hostname ruledOut { rule message change }
  groups { group providers { rpUuid deviceUuid alternative ruledOut { rule message change } } } }`;

export function explainCommand(): Command {
  return withService(new Command("explain"))
    .description("why a profile (or one ARQ, --arq) does not fit: hosts per rule, then the hosts closest to fitting with each provider's reason")
    .argument("[deviceProfileName]")
    .option("--arq <uuid>", "explain this ARQ: its group, its project's quota, and why it is not bound where it is not")
    .option("--host <name>", "only this host (repeatable; not with --arq)", collect, [])
    .option("--detail <n>", "hosts given in detail", (v) => Number.parseInt(v, 10), 20)
    .option("--json", "print the whole explanation as JSON", false)
    .action(async (name: string | undefined, o: { arq?: string; host: string[]; detail: number; json: boolean }, cmd: Command) => {
      if ((name === undefined) === (o.arq === undefined)) cmd.error("give a device profile's name or --arq UUID (one of them)");
      const q = o.arq
        ? `query($a: ID!, $d: Int) { explainPlacement(arqUuid: $a, detail: $d) { ${EXPLANATION}
            acceleratorRequest { uuid state hostname deviceRpUuid deviceProfileName projectId } quota { classes { resourceClass limit usage } } } }`
        : `query($n: String!, $h: [String!], $d: Int) { explainPlacement(deviceProfileName: $n, hosts: $h, detail: $d) { ${EXPLANATION} } }`;
      const vars = o.arq ? { a: o.arq, d: o.detail } : { n: name, h: o.host.length ? o.host : null, d: o.detail };
      const { explainPlacement: e } = await callService<{ explainPlacement: ExplainAnswer }>(client(cmd), q, vars);
      if (o.json) return print(e);
      const arq = e.acceleratorRequest;
      if (arq) {
        console.log(`ARQ ${arq.uuid} (${arq.deviceProfileName}, project ${arq.projectId ?? "none"}): ${arq.state}${arq.hostname ? ` on ${arq.hostname}, provider ${arq.deviceRpUuid}` : ""}`);
        for (const c of e.quota?.classes ?? []) console.log(`quota ${c.resourceClass}: ${c.usage} used of ${c.limit ?? "no limit"}`);
      }
      console.log(`${e.fitting} of ${e.hosts} host(s) fit now`);
      printTable(e.detail.map((d) => ({ host: d.hostname, rule: d.ruledOut?.rule ?? "FITS", why: d.ruledOut?.message ?? "", change: d.ruledOut?.change ?? "" })), "no hosts");
    });
}

export function capacityCommand(): Command {
  return withService(new Command("capacity"))
    .description("how many more of a profile fit now, per host and in total; --without-host/--without-device: what if they were gone")
    .argument("<deviceProfileName>")
    .option("--without-host <name>", "leave this host out (repeatable)", collect, [])
    .option("--without-device <uuid>", "leave this device out (repeatable)", collect, [])
    .option("--json", "print JSON instead of a table", false)
    .action(async (name: string, o: { withoutHost: string[]; withoutDevice: string[]; json: boolean }, cmd: Command) => {
      const q = `query($n: String!, $w: PlacementWithoutInput) { placementCapacity(deviceProfileName: $n, without: $w) { total hosts { hostname count } } }`;
      const { placementCapacity: c } = await callService<{ placementCapacity: { total: number; hosts: Array<{ hostname: string; count: number }> } }>(client(cmd), q, {
        n: name,
        w: { hosts: o.withoutHost, devices: o.withoutDevice },
      });
      if (o.json) return print(c);
      console.log(`${c.total} more fit`);
      printTable(c.hosts.map((h) => ({ host: h.hostname, count: h.count })), "no host has room");
    });
}
