import { hostname as osHostname } from "node:os";
import { Command, Option } from "commander";
import { reportOnce, runAgent, type AgentOptions } from "../clients/agent/agent.js";
import { HostLock } from "../clients/agent/host-lock.js";
import { programHandler } from "../clients/agent/program-handler.js";
import { runAgentRequests, type AgentRequestHandler } from "../clients/agent/requests.js";
import { cleanHandler } from "../clients/agent/clean-handler.js";
import { partitionHandlers } from "../clients/agent/partition-handler.js";
import { discoverAll } from "../clients/agent/drivers/index.js";
import type { DriverDevice } from "../domain/inventory/report.js";
import { withHealth } from "../clients/agent/drivers/health/index.js";
import { driverEnv, type DriverCliOptions } from "../clients/agent/driver-env.js";
import { createLogger } from "../infra/logger.js";
import { explainRefusal, serviceClient, withService } from "./service-options.js";
import { printTable } from "./table.js";

export { defaultUrl } from "./service-options.js";

const DEFAULT_DRIVERS = "nvidia-gpu,intel-fpga,xilinx-fpga,intel-qat";

function driverOptions(cmd: Command): Command {
  return cmd
    .option("--hostname <name>", "this host's name as the compute node knows it", osHostname())
    .option("--drivers <list>", "enabled drivers: fake, fake-mig, nvidia-gpu, intel-fpga, xilinx-fpga, intel-qat, pci", DEFAULT_DRIVERS)
    .option("--sysfs-root <dir>", "where sysfs is mounted", "/sys")
    .option("--lspci <command>", "the lspci command to run", "lspci -nnn -D")
    .option("--pci-whitelist <json>", 'pci driver devices, e.g. [{"vendorId":"10ee","productId":"5005"}]', "[]")
    .option("--nvidia-skip-vfs", "do not report NVIDIA SR-IOV virtual functions", false)
    .option("--vgpu-types <list>", "NVIDIA vGPU types to report, e.g. nvidia-222,nvidia-223", "")
    .option("--vgpu-on-demand", "offer NVIDIA vGPU (mdev) types as partitions made at bind time, not as fixed instances", false)
    .option("--fake-region-type <type>", "fake driver: report region type <type> (CUSTOM_FPGA_FAKE_REGION_<TYPE>), for bitstreams by function")
    .option("--fake-program-delay <ms>", "fake driver: programming takes this long")
    .option("--fake-program-fail <message>", "fake driver: programming fails with this message")
    .option("--fake-clean-delay <ms>", "fake driver: a clean takes this long")
    .option("--fake-clean-fail <message>", "fake driver: a clean fails with this message")
    .option("--fake-mig-gpus <n>", "fake-mig driver: how many H100-like GPUs in MIG mode it reports (default 1)")
    .option("--fake-mig-create-delay <ms>", "fake-mig driver: making a partition takes this long")
    .option("--fake-mig-create-fail <message>", "fake-mig driver: making a partition fails with this message")
    .addOption(
      new Option("--intel-fpga-clean-bitstream <file>", "intel-fpga: the blank or golden bitstream a clean programs (without it, cleans are refused)").env(
        "CYBORG_AGENT_INTEL_FPGA_CLEAN_BITSTREAM",
      ),
    )
    .option("--fake-state <file>", "fake driver: keep what the device was programmed with in this file (default: in memory)")
    .option("--fake-health-file <file>", 'fake driver: report the health in this JSON file, read every pass, e.g. {"status":"CRITICAL","reasons":[{"code":"INJECTED","message":"test"}]}')
    .option("--nvidia-smi <path>", "the nvidia-smi binary the NVIDIA GPUs' health and MIG state are read with, and MIG instances made with", "nvidia-smi")
    .option("--kernel-log <command>", "the command that prints the kernel log, for NVIDIA XID events", "dmesg");
}

export function agentCommand(): Command {
  const agent = withService(driverOptions(new Command("agent").enablePositionalOptions()), "agent")
    .description("discover this host's accelerators and report them to the service, now and every interval")
    .option("--interval <seconds>", "seconds between reports", "60")
    .option("--once", "discover, report, print a summary and exit", false)
    .option("--no-programming", "do not take FPGA programming requests")
    .option("--no-cleaning", "do not take requests to clean a device before its next tenant")
    .option("--no-partitions", "do not take requests to make or destroy partitions (MIG instances, mdevs)")
    .option("--work-dir <dir>", "where downloaded bitstreams are kept while checked and programmed")
    .option("--log-level <level>", "log level", process.env.LOG_LEVEL ?? "info")
    .action(async (o: DriverCliOptions & { interval: string; once: boolean; logLevel: string; programming: boolean; cleaning: boolean; partitions: boolean; workDir?: string }, cmd: Command) => {
      const client = serviceClient(cmd, "agent");
      const interval = Number(o.interval);
      if (!Number.isFinite(interval) || interval < 1) throw new Error(`--interval must be a number of seconds >= 1, got ${o.interval}`);
      const log = createLogger(o.logLevel, "cyborg-es-agent");
      const opts: AgentOptions = {
        client: { url: client.url, token: client.token },
        hostname: o.hostname,
        drivers: splitList(o.drivers),
        env: driverEnv(o),
        intervalMs: interval * 1000,
        log,
      };
      if (o.once) {
        log.info({ url: client.url, hostname: o.hostname, drivers: opts.drivers }, `reporting ${o.hostname} to ${client.url}`);
        const s = await reportOnce(opts).catch((err: unknown) => {
          throw explainRefusal(err, client);
        });
        console.log(
          `${s.hostname}: ${s.devices} devices reported; added ${s.added}, updated ${s.updated}, removed ${s.removed}, ` +
            `unchanged ${s.unchanged}; host stream at revision ${s.revision}` +
            (s.driverErrors.length ? `; ${s.driverErrors.length} driver(s) failed: ${s.driverErrors.map((e) => e.driver).join(", ")}` : ""),
        );
        return;
      }
      const ac = new AbortController();
      process.once("SIGTERM", () => ac.abort());
      process.once("SIGINT", () => ac.abort());
      log.info({ url: client.url, hostname: o.hostname, drivers: opts.drivers, intervalS: interval, programming: o.programming, cleaning: o.cleaning, partitions: o.partitions }, "agent started");
      const lock = new HostLock();
      const worker = { client: opts.client, hostname: o.hostname, drivers: opts.drivers, env: opts.env, log, lock };
      const handlers: AgentRequestHandler[] = [];
      if (o.programming) handlers.push(programHandler({ ...worker, workDir: o.workDir }));
      if (o.cleaning) handlers.push(cleanHandler(worker));
      if (o.partitions) handlers.push(...partitionHandlers(worker));
      await Promise.all([runAgent({ ...opts, lock }, ac.signal), handlers.length > 0 && runAgentRequests({ client: opts.client, hostname: o.hostname, log, handlers }, ac.signal)]);
    });

  agent.addCommand(
    driverOptions(new Command("discover"))
      .description("print what the drivers see, without reporting anything")
      .option("--json", "print JSON instead of a table", false)
      .action(async (_o: unknown, cmd: Command) => {
        const o = withParentDefaults<DriverCliOptions & { json: boolean }>(cmd);
        const log = createLogger("warn", "cyborg-es-agent");
        const env = driverEnv(o);
        const found = await discoverAll(splitList(o.drivers), env, log);
        const { errors } = found;
        const devices = await withHealth(found.devices, env);
        if (o.json) return console.log(JSON.stringify({ devices, errors }, null, 2));
        const rows = devices.flatMap((d) =>
          d.deployables.map((dep) => ({
            type: d.type,
            vendor: d.vendor,
            model: d.model,
            address: pciText(d.controlPath.info),
            deployable: dep.name,
            health: d.health ? [d.health.status, ...d.health.reasons.map((r) => r.code)].join(" ") : "",
            accelerators: dep.numAccelerators,
            handles: dep.attachHandles.length,
            rc: dep.attributes.find((a) => a.key === "rc")?.value ?? "",
            traits: dep.attributes.filter((a) => a.key.startsWith("trait")).map((a) => a.value).join(" "),
          })),
        );
        printTable([...rows, ...devices.flatMap(partitionRows)], "no accelerators found");
        for (const e of errors) console.error(`driver ${e.driver} failed: ${e.message}`);
      }),
  );
  return agent;
}

/** A partitioned device's profiles, one row each: how many it may make, how many exist (handles). */
function partitionRows(d: DriverDevice) {
  const p = d.partitioning;
  if (!p) return [];
  return p.profiles.map((profile) => ({
    type: d.type,
    vendor: d.vendor,
    model: d.model,
    address: pciText(d.controlPath.info),
    deployable: `${profile.name} (made on demand by ${p.driverName ?? "hand"})`,
    health: d.health ? [d.health.status, ...d.health.reasons.map((r) => r.code)].join(" ") : "",
    accelerators: profile.maxInstances ?? "",
    handles: p.partitions.filter((x) => x.profile === profile.name).length,
    rc: profile.resourceClass,
    traits: "",
  }));
}

/**
 * A subcommand's options, where each one left at its default takes the value given to the parent
 * instead (`agent --drivers fake discover` is `agent discover --drivers fake`).
 */
export function withParentDefaults<T>(cmd: Command): T {
  const own = cmd.opts();
  const parent = cmd.parent;
  if (!parent) return own as T;
  const merged: Record<string, unknown> = { ...own };
  for (const key of Object.keys(own)) {
    const ownSource = cmd.getOptionValueSource(key);
    const parentSource = parent.getOptionValueSource(key);
    if ((ownSource === "default" || ownSource === undefined) && parentSource !== undefined && parentSource !== "default") merged[key] = parent.opts()[key];
  }
  return merged as T;
}

const splitList = (s: string) => s.split(",").map((x) => x.trim()).filter(Boolean);
const pciText = (i: Record<string, unknown>) => `${i.domain}:${i.bus}:${i.device}.${i.function}`;
