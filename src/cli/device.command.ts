/**
 * `cyborg-es device list|show|taint|untaint`: devices, their taints and lifecycle state, from the
 * command line (admin token for taints). It speaks GraphQL to the service, as any client does.
 */
import { Command } from "commander";
import { callService, serviceClient, withService as serviceOptions } from "./service-options.js";
import { printTable } from "./table.js";

const FIELDS = "uuid hostname type vendor model status lifecycleState lost taints { key value effect by reason at } topology { numaNode pcieRoot pcieSwitch linkDomain }";
/** `show` adds the clean: in flight, the failure, the last outcome with its digest and command. */
const SHOW_FIELDS = `${FIELDS} cleaning { required inFlight { requestId reason requestedAt } qualifyingSince failure { reason at }
  last { requestId outcome digest command durationMs reason at } }`;

interface DeviceOut {
  uuid: string;
  hostname: string;
  type: string;
  status: string;
  lifecycleState: string;
  taints: Array<{ key: string; value: string; effect: string; by: string; reason: string; at: string }>;
  topology: { numaNode: number | null; pcieRoot: string | null; pcieSwitch: string | null; linkDomain: string | null } | null;
}

/** Reading devices takes any token; taints need an admin one, as the service says when refused. */
const withService = (cmd: Command) => serviceOptions(cmd, "any");
const client = (cmd: Command) => serviceClient(cmd, "any");

const label = (t: { key: string; value: string; effect: string }) => `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`;

export function deviceCommand(): Command {
  const cmd = new Command("device").description("devices: taints (NoSchedule, NoExecute) and lifecycle state");
  for (const sub of [listCommand(), showCommand(), taintCommand(), untaintCommand()]) cmd.addCommand(sub);
  return cmd;
}

function listCommand(): Command {
  return withService(new Command("list"))
    .description("every device, with its state, NUMA node, link domain and taints")
    .option("--host <hostname>", "only this host's devices")
    .option("--json", "print JSON instead of a table", false)
    .action(async (o: { host?: string; json: boolean }, cmd: Command) => {
      const q = `query($f: DeviceFilter) { devices(filter: $f, first: 1000) { nodes { ${FIELDS} } } }`;
      const { devices } = await callService<{ devices: { nodes: DeviceOut[] } }>(client(cmd), q, { f: o.host ? { hostname: o.host } : null });
      if (o.json) return console.log(JSON.stringify(devices.nodes, null, 2));
      const rows = devices.nodes.map((d) => ({ uuid: d.uuid, host: d.hostname, type: d.type, status: d.status, state: d.lifecycleState, numa: d.topology?.numaNode ?? "", link: d.topology?.linkDomain ?? "", taints: d.taints.map(label).join(", ") }));
      printTable(rows, "no devices");
    });
}

function showCommand(): Command {
  return withService(new Command("show"))
    .description("one device as JSON, with its taints, topology and cleaning (in flight, failure, last outcome)")
    .argument("<uuid>")
    .action(async (uuid: string, _o: unknown, cmd: Command) => {
      const { device } = await callService<{ device: DeviceOut | null }>(client(cmd), `query($u: ID!) { device(uuid: $u) { ${SHOW_FIELDS} } }`, { u: uuid });
      if (!device) throw new Error(`no device ${uuid}`);
      console.log(JSON.stringify(device, null, 2));
    });
}

function taintCommand(): Command {
  return withService(new Command("taint"))
    .description("set a taint: NoSchedule keeps new binds off the device, NoExecute also asks its holders to move")
    .argument("<uuid>")
    .argument("<taint>", "<key>[=<value>]:<effect>, e.g. cyborg.openstack.org/maintenance:NoSchedule")
    .requiredOption("--reason <text>", "why, for whoever reads the device's history")
    .action(async (uuid: string, spec: string, o: { reason: string }, cmd: Command) => {
      const colon = spec.lastIndexOf(":");
      if (colon < 0) throw new Error(`${spec}: give the effect, as <key>[=<value>]:NoSchedule or :NoExecute`);
      const [key, value] = splitValue(spec.slice(0, colon));
      const taint = { key, value, effect: spec.slice(colon + 1), reason: o.reason };
      const q = `mutation($u: ID!, $t: TaintInput!) { taintDevice(uuid: $u, taint: $t) { ${FIELDS} } }`;
      const { taintDevice } = await callService<{ taintDevice: DeviceOut }>(client(cmd), q, { u: uuid, t: taint });
      console.log(`${uuid}: ${taintDevice.lifecycleState}, taints ${taintDevice.taints.map(label).join(", ")}`);
    });
}

function untaintCommand(): Command {
  return withService(new Command("untaint"))
    .description("remove a taint (without :<effect>, every taint of the key)")
    .argument("<uuid>")
    .argument("<taint>", "<key>[:<effect>]")
    .option("--reason <text>", "why, for the device's history")
    .action(async (uuid: string, spec: string, o: { reason?: string }, cmd: Command) => {
      const colon = spec.lastIndexOf(":");
      const effect = colon < 0 ? null : spec.slice(colon + 1);
      const key = colon < 0 ? spec : spec.slice(0, colon);
      const q = `mutation($u: ID!, $k: String!, $e: TaintEffect, $r: String) { untaintDevice(uuid: $u, key: $k, effect: $e, reason: $r) { ${FIELDS} } }`;
      const { untaintDevice } = await callService<{ untaintDevice: DeviceOut }>(client(cmd), q, { u: uuid, k: key, e: effect, r: o.reason ?? null });
      const left = untaintDevice.taints.map(label).join(", ");
      console.log(`${uuid}: ${untaintDevice.lifecycleState}${left ? `, taints ${left}` : ", no taints"}`);
    });
}

function splitValue(s: string): [string, string] {
  const eq = s.indexOf("=");
  return eq < 0 ? [s, ""] : [s.slice(0, eq), s.slice(eq + 1)];
}
