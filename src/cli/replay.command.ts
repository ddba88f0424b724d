import { Command } from "commander";
import { projections } from "../../projections/index.js";
import { openEventStore, rebuildLog } from "../service/adapters.js";
import { resolvePoint } from "../audit/points.js";
import { pastLog, pastReadStore, replayInto } from "../audit/replay.js";
import { loadConfig, type Config } from "../infra/config.js";
import { createLogger } from "../infra/logger.js";
import { startService } from "../service/main.js";
import type { RebuildProgress } from "../reactors/projector/rebuild.js";
import { MemoryReadStore } from "../infra/readstore/memory.js";
import type { ReadStore } from "../infra/readstore/port.js";
import { positionBar, rate } from "./audit.command.js";

/** Same server and database: the live read models, which a replay must never overwrite. */
export function sameRedis(a: string, b: string): boolean {
  const norm = (u: string) => {
    const x = new URL(u);
    return `${x.hostname}:${x.port || "6379"}/${x.pathname.replace(/^\//, "") || "0"}`;
  };
  // b may be a Redis Cluster's nodes (REDIS_CLUSTER=true), comma-separated.
  return b.split(",").some((node) => norm(a) === norm(node));
}

export function replayCommand(): Command {
  return new Command("replay")
    .description("materialize the read models as they were at a point, to ask every normal query of the past")
    .requiredOption("--until <position|time>", "the point: a log position, or an ISO-8601 time (the last event recorded by then)")
    .option("--into <target>", "redis://host:port/<db> (a separate database: never the live one) or memory", "memory")
    .option("--serve [port]", "then serve the past read-only (GraphQL and REST) on this port (default: PORT); without it, the replay ends when the read models are written")
    .action(async (o: { until: string; into: string; serve?: string | boolean }) => {
      const config = loadConfig();
      const events = await openEventStore(config);
      let target: ReadStore | undefined;
      try {
        target = await openTarget(o.into, config);
        const upTo = await resolvePoint(events, o.until, "--until");
        const head = (await events.headPosition()) ?? 0n;
        const point = upTo < head ? upTo : head;
        const bar = positionBar("replay");
        const startedAt = performance.now();
        let count = 0;
        bar.start(Number(point), 0, { events: 0, rate: 0 });
        // Redis mode: the past audit index is the live one, cut at the point (past-index.ts).
        const liveIndex = config.REDIS_URL !== undefined;
        const progress = (p: RebuildProgress) => {
          count = p.events;
          bar.update(Number(p.position), { events: p.events, rate: rate(p.events, startedAt) });
        };
        const leftOut = await replayInto(events, target, projections, point, progress, liveIndex, rebuildLog(events, config));
        bar.update(Number(point));
        bar.stop();
        console.error(`replayed ${count} events up to position ${point} into ${o.into} in ${((performance.now() - startedAt) / 1000).toFixed(2)} s (${rate(count, startedAt)} events/s)`);
        for (const [model, streams] of Object.entries(leftOut)) {
          console.error(`the ${model} model left out the events of ${streams} stream${streams === 1 ? "" : "s"} that had ended by then (docs/audit.md: what a replay leaves out)`);
        }
        if (liveIndex) console.error(`the audit index (history, trace) was not replayed: a past server reads the live one (REDIS_URL), cut at ${point}`);
        if (o.serve !== undefined) {
          await servePast(config, events, target, point, o.serve === undefined || o.serve === true ? config.PORT : Number(o.serve));
          return; // serves until interrupted; the stores close with the process
        }
      } catch (err) {
        await target?.close();
        await events.close();
        throw err;
      }
      if (o.into === "memory") console.error("the replayed read models were in memory and are gone now: add --serve [port] to query them, or --into redis://... to keep them");
      await target.close();
      await events.close();
    });
}

/** The same server, another database: the next number (0-15, Redis's default count). */
export function otherDatabase(url: string): string {
  const u = new URL(url);
  const db = Number(u.pathname.replace(/^\//, "") || "0");
  u.pathname = `/${Number.isInteger(db) ? (db + 1) % 16 : 5}`;
  return u.toString();
}

async function openTarget(into: string, config: Config): Promise<ReadStore> {
  if (into === "memory") return new MemoryReadStore();
  if (!/^rediss?:\/\//.test(into)) throw new Error(`--into must be memory or a Redis URL such as redis://localhost:6379/5, got ${JSON.stringify(into)}`);
  if (config.REDIS_URL && sameRedis(into, config.REDIS_URL)) {
    throw new Error(`--into ${into} is the live read models' database (REDIS_URL): replay into another one, e.g. ${otherDatabase(into)}`);
  }
  const { RedisReadStore } = await import("../infra/readstore/redis.js");
  return new RedisReadStore(into);
}

/** A read-only API over the replayed read models and the log cut at the same point (no projector, no binder). */
async function servePast(config: Config, events: Awaited<ReturnType<typeof openEventStore>>, readStore: ReadStore, point: bigint, port: number) {
  const log = createLogger(config.LOG_LEVEL);
  const service = await startService({ ...config, PORT: port, roles: new Set(["api"]) }, log, {
    store: pastLog(events, point),
    // With REDIS_URL, the service's own read store is the live one: history and trace read its audit index.
    wrapReadStore: pastReadStore(readStore, config.REDIS_URL !== undefined, point),
  });
  console.error(`serving the past (position ${point}) read-only at ${service.url}; Ctrl-C to stop`);
  const stop = () => void service.close().finally(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
