import { Command } from "commander";
import { ConfigError, loadConfig } from "../infra/config.js";
import { createLogger } from "../infra/logger.js";
import { settleHeapGrowth } from "./heap-growth.js";
import { gcSettingRefusal } from "./node-flags.js";
import { settlePretenuring } from "./pretenuring.js";
import { startupBlock } from "./startup-block.js";

export function serveCommand(): Command {
  return new Command("serve")
    .description("run the service (embedded by default; EventStoreDB + Redis when EVENTSTORE_URL and REDIS_URL are set)")
    .option("--workers <n>", "API workers on the embedded log: a number, or cores (API_WORKERS; default 1)")
    .action(async (opts: { workers?: string }) => {
      // Through the environment: the API workers run this command again and read it from there.
      if (opts.workers !== undefined) process.env.API_WORKERS = opts.workers;
      let config;
      try {
        config = loadConfig();
      } catch (err) {
        if (err instanceof ConfigError) {
          console.error(err.message);
          process.exit(2);
        }
        throw err;
      }
      // SINGLE_THREADED_GC is node's command line's business (./node-flags.ts): one it did not get is refused.
      const gcRefusal = gcSettingRefusal(process.execArgv, process.env);
      if (gcRefusal) {
        console.error(gcRefusal);
        process.exit(2);
      }
      const log = createLogger(config.LOG_LEVEL);
      // The log, the read models on disk, the bitstreams and the tokens: readable by this user only.
      process.umask(0o077);
      // A service runs as in production unless NODE_ENV says otherwise: graphql-js then leaves out a
      // development check it makes on every type test of every field it executes (read once, as
      // graphql is loaded: below). Apollo's own choices are set explicitly (api/http-server.ts).
      process.env.NODE_ENV ??= "production";
      // Before the service allocates anything: a first start's replay would teach V8 to put every
      // decoded event straight into the old generation (./pretenuring.ts).
      const pretenuring = settlePretenuring();
      // A large fleet's heap collected whole every few minutes, not every two (./heap-growth.ts).
      const heapGrowthPercent = settleHeapGrowth();
      // Loaded here: the other commands (os-acc, agent) start without the server's modules.
      const { startService } = await import("../service/main.js");
      const service = config.apiWorkers > 1 ? await (await import("../service/workers.js")).startWithWorkers(config, log) : await startService(config, log);
      log.info({ pretenuring }, pretenuring ? "V8 pretenures allocation sites (node's default, as asked)" : "V8 pretenuring off: short-lived objects stay in the young generation");
      log.info(
        { heapGrowthPercent: heapGrowthPercent ?? null },
        heapGrowthPercent ? `V8 collects the old generation whole once it grew by ${heapGrowthPercent}% of what the last collection kept` : "V8 chooses when to collect the old generation whole (node's default, as asked)",
      );
      if (service.url) console.error(startupBlock(config, service.url));
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, "shutting down: draining HTTP and WebSocket, stopping the projector and binder, closing stores");
        const force = setTimeout(() => {
          log.error({ shutdownTimeoutS: config.SHUTDOWN_TIMEOUT_S }, "the stop took longer than SHUTDOWN_TIMEOUT_S: exiting now; read models whose snapshots were not written are rebuilt from the log at the next start");
          process.exit(1);
        }, config.SHUTDOWN_TIMEOUT_S * 1000);
        force.unref();
        await service.close();
        log.info("stopped");
        process.exit(0);
      };
      process.once("SIGTERM", () => void stop("SIGTERM"));
      process.once("SIGINT", () => void stop("SIGINT"));
    });
}
