import cliProgress from "cli-progress";
import { Command } from "commander";
import { projections } from "../../projections/index.js";
import { openEventStore, openReadSide, rebuildLog } from "../service/adapters.js";
import { embeddedAdminToken } from "../api/auth/tokens.js";
import { loadConfig, type Config } from "../infra/config.js";
import { readFollowerStatus, type FollowerStatus } from "../reactors/follower/status.js";
import { createLogger } from "../infra/logger.js";
import type { ProjectionStatus } from "../reactors/projector/progress.js";
import { NOVA_NOTIFIER } from "../reactors/nova/notifier.js";
import { PLACEMENT_SYNC } from "../reactors/placement/sync.js";
import { Projector } from "../reactors/projector/projector.js";
import { serviceClient, withService } from "./service-options.js";
import { formatTable } from "./table.js";

/** A projection's row, or a log follower's (the Placement sync, the Nova notifier). */
type Row = ProjectionStatus | FollowerStatus;

const LAG_COUNT_CAP = 100_000;

export function projectionsCommand(): Command {
  const cmd = new Command("projections").description("inspect and rebuild the read models");

  withService(cmd.command("status"), "admin")
    .description(
      "each projection's (and the Placement sync's and Nova notifier's) checkpoint and lag behind the event log; " +
        "embedded mode asks the running server (--url) with an admin token (default: the admin token of DATA_DIR/tokens.json)",
    )
    .option("--json", "print JSON", false)
    .action(async (o: { json: boolean }, sub: Command) => {
      const config = loadConfig();
      const rows = config.readModels === "memory" ? await statusFromServer(config, sub) : await statusFromStores(config);
      if (o.json) return console.log(JSON.stringify(rows, null, 2));
      console.log(
        formatTable(rows.map((r) => ({ projection: r.name, state: r.state, checkpoint: r.checkpoint, head: r.headPosition, lagEvents: r.lagEvents, lagMs: r.lagMs, error: r.error }))),
      );
    });

  cmd
    .command("rebuild")
    .description("drop read models and replay the log into them (Redis); embedded: replay into memory as a check")
    .option("--name <name...>", `only these projections (${projections.map((p) => p.name).join(", ")})`)
    .action(async (o: { name?: string[] }) => {
      const config = loadConfig();
      const unknown = (o.name ?? []).filter((n) => !projections.some((p) => p.name === n));
      if (unknown.length) throw new Error(`unknown projection(s): ${unknown.join(", ")}`);
      const store = await openEventStore(config);
      const { readStore, pubsub } = await openReadSide(config);
      if (config.readModels === "memory") {
        console.error("embedded mode: read models live in the server's memory and are rebuilt at every start; replaying into memory as a check");
      }
      const projector = new Projector({ events: store, replayLog: rebuildLog(store, config), store: readStore, projections, log: createLogger("warn") });
      const bar = new cliProgress.SingleBar(
        { format: "rebuild [{bar}] {percentage}% | {value}/{total} positions | {events} events | {rate} events/s", hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      const head = await store.headPosition();
      const start = performance.now();
      let events = 0;
      bar.start(Number(head ?? 0n), 0, { events: 0, rate: 0 });
      await projector.rebuild(o.name, (p) => {
        events = p.events;
        bar.update(Number(p.position), { events: p.events, rate: Math.round(p.events / Math.max(p.elapsedMs / 1000, 0.001)) });
      });
      bar.update(Number(head ?? 0n));
      bar.stop();
      const seconds = (performance.now() - start) / 1000;
      console.log(`rebuilt ${(o.name ?? projections.map((p) => p.name)).join(", ")}: ${events} events in ${seconds.toFixed(2)} s (${Math.round(events / Math.max(seconds, 0.001))} events/s)`);
      await pubsub.close();
      await readStore.close();
      await store.close();
    });
  return cmd;
}

async function statusFromServer(config: Config, sub: Command): Promise<Row[]> {
  const base = new URL(sub.opts<{ url: string }>().url);
  const embedded = embeddedAdminToken(config);
  const admin = embedded && !sub.opts().token && !sub.opts().tokenFile ? embedded : serviceClient(sub, "admin").token;
  const res = await fetch(new URL("/readyz", base), { headers: { authorization: `Bearer ${admin}` } }).catch((err: Error) => {
    throw new Error(`cannot reach ${base.origin}/readyz (${err.cause ?? err.message}); in embedded mode the read models live in the server's memory: is it running there? --url, CYBORG_URL, or PORT and HOST say where`);
  });
  const body = (await res.json()) as { projections?: ProjectionStatus[]; followers?: FollowerStatus[] };
  if (!body.projections) throw new Error(`the server at ${base.origin} did not show its projections: the token is not an admin's (--token-file, CYBORG_TOKEN or --token)`);
  return [...(body.projections ?? []), ...(body.followers ?? [])];
}

async function statusFromStores(config: Config): Promise<Row[]> {
  const store = await openEventStore(config);
  const { readStore, pubsub } = await openReadSide(config);
  try {
    const head = await store.headPosition();
    const cps = await readStore.getCheckpoints(projections.map((p) => p.name));
    const rows: Row[] = [];
    for (const [i, p] of projections.entries()) {
      const cp = cps[i];
      const behind = head !== undefined && (cp === undefined || cp < head);
      // Positions are not dense: count the events after the checkpoint, up to a cap.
      const lag = behind ? (await store.readAll({ after: cp, maxCount: LAG_COUNT_CAP + 1, filter: { eventTypes: p.eventTypes } })).length : 0;
      rows.push({
        name: p.name,
        checkpoint: cp?.toString() ?? null,
        headPosition: head?.toString() ?? null,
        lagEvents: Math.min(lag, LAG_COUNT_CAP),
        lagEventsExact: lag <= LAG_COUNT_CAP,
        lagMs: 0,
        state: behind ? "catching-up" : "live",
      });
    }
    // The log followers publish their status to the read store (when a process runs them).
    for (const name of [PLACEMENT_SYNC, NOVA_NOTIFIER]) {
      const status = await readFollowerStatus(readStore, name);
      if (status) rows.push(status);
    }
    return rows;
  } finally {
    await pubsub.close();
    await readStore.close();
    await store.close();
  }
}
