/**
 * What the composition root asks of observability: the metrics registry (METRICS, on by default),
 * tracing (the standard OTEL_* variables, off by default), and the seams they use: the event store
 * and the application wrapped, and projector hooks. Each seam is the plain object when its
 * feature is off.
 */
import type { Application } from "../app/application.js";
import type { Config } from "../infra/config.js";
import type { Logger } from "../infra/logger.js";
import type { EventStore } from "../infra/eventstore/port.js";
import type { ProjectorHooks } from "../reactors/projector/projection.js";
import { instrumentEventStore } from "./instrumented-store.js";
import { Metrics } from "./metrics.js";
import { startMetricsServer } from "./metrics-server.js";
import { ProjectionBatchTimes } from "./projection-batch-times.js";
import { ProjectionSpans } from "./projection-spans.js";
import { traceApplication } from "./traced-application.js";
import { startTracing, type Tracing } from "./tracing.js";

export interface Observability {
  metrics?: Metrics;
  tracing?: Tracing;
  store(store: EventStore): EventStore;
  app(app: Application): Application;
  projectorHooks: ProjectorHooks[];
  close(): Promise<void>;
}

/** Metrics (and their own listener with METRICS_PORT) and tracing, as configured. */
export async function startObservability(
  config: Pick<Config, "METRICS" | "METRICS_PORT" | "HOST">,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Observability> {
  const metrics = config.METRICS === "on" ? new Metrics() : undefined;
  const server = metrics && config.METRICS_PORT !== undefined ? await startMetricsServer(metrics, config.METRICS_PORT, config.HOST) : undefined;
  if (server) log.info({ url: server.url }, "serving metrics on their own port");
  const tracing = await startTracing(env);
  if (tracing) log.info({ endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT, sampler: env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on" }, "tracing on");
  return {
    metrics,
    tracing,
    store: (store) => instrumentEventStore(store, metrics, tracing),
    app: (app) => traceApplication(app, tracing),
    projectorHooks: [...(tracing ? [new ProjectionSpans(tracing)] : []), ...(metrics ? [new ProjectionBatchTimes(metrics)] : [])],
    close: async () => {
      await server?.close();
      await tracing?.close();
    },
  };
}

export { Metrics } from "./metrics.js";
export type { OperationMetrics } from "./metrics.js";
