import cliProgress from "cli-progress";
import { Command } from "commander";
import { loadConfig, type Config } from "../infra/config.js";
import { readFollowerStatus } from "../reactors/follower/status.js";
import { openEventStore, openReadSide } from "../service/adapters.js";
import { reconcilePlacement, type ReconcileReport } from "../reactors/placement/reconcile.js";
import { PLACEMENT_SYNC, placementClientFor } from "../reactors/placement/sync.js";
import { formatTable } from "./table.js";

export function placementCommand(): Command {
  const cmd = new Command("placement").description("the accelerators in OpenStack Placement (PLACEMENT_URL, PLACEMENT_TOKEN)");

  cmd
    .command("reconcile")
    .description("make Placement match the inventory in the log: every host, and Cyborg providers no host wants; prints what it changed")
    .option("--dry-run", "only print what would change", false)
    .option("--json", "print the report as JSON", false)
    .action(async (o: { dryRun: boolean; json: boolean }) => {
      const config = placementConfig();
      const store = await openEventStore(config);
      const bar = new cliProgress.SingleBar(
        { format: `${o.dryRun ? "dry run " : ""}reconcile [{bar}] {value}/{total} hosts | {host}`, hideCursor: true, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      );
      let started = false;
      try {
        const report = await reconcilePlacement({
          store,
          client: placementClientFor(config),
          missingComputeNode: config.PLACEMENT_MISSING_COMPUTE_NODE,
          dryRun: o.dryRun,
          onProgress: (done, total, host) => {
            if (!started) bar.start(total, 0, { host });
            started = true;
            bar.update(done, { host });
          },
        });
        if (started) bar.stop();
        if (o.json) console.log(JSON.stringify(report, null, 2));
        else printReport(report);
        process.exitCode = report.errors.length ? 1 : 0;
      } finally {
        if (started) bar.stop();
        await store.close();
      }
    });

  cmd
    .command("status")
    .description("the Placement sync's checkpoint, lag, last error and waiting hosts (as its process last published them)")
    .option("--json", "print JSON", false)
    .action(async (o: { json: boolean }) => {
      const config = loadConfig();
      if (config.readModels === "memory") {
        throw new Error("embedded mode: the sync's status lives in the server's memory; see GET /readyz on the server");
      }
      const { readStore, pubsub } = await openReadSide(config);
      try {
        const status = await readFollowerStatus(readStore, PLACEMENT_SYNC);
        if (o.json || !status) console.log(JSON.stringify(status, null, 2));
        else console.log(formatTable([status].map((s) => ({ state: s.state, checkpoint: s.checkpoint, head: s.headPosition, lagEvents: s.lagEvents, lagMs: s.lagMs, lastError: s.lastError?.message, at: s.at }))));
      } finally {
        await pubsub.close();
        await readStore.close();
      }
    });
  return cmd;
}

function placementConfig(): Config {
  const config = loadConfig();
  if (!config.PLACEMENT_URL) throw new Error("PLACEMENT_URL is not set (e.g. PLACEMENT_URL=http://127.0.0.1:8778 PLACEMENT_TOKEN=admin)");
  return config;
}

function printReport(r: ReconcileReport): void {
  const verb = r.dryRun ? "would change" : "changed";
  for (const c of r.changes) console.log(`${r.dryRun ? "would " : ""}${c.action.padEnd(20)} ${c.name} (${c.uuid}) on ${c.host}: ${c.detail}`);
  for (const w of r.waiting) console.log(`waiting              ${w.host}: ${w.reason}`);
  for (const e of r.errors) console.log(`error                ${e.host}: ${e.message}`);
  console.log(`${r.hosts} hosts; ${verb} ${r.changes.length}${r.changes.length ? "" : " (Placement matches)"}; ${r.waiting.length} waiting; ${r.errors.length} errors`);
}
