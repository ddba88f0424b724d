/**
 * The service's Prometheus metrics (prom-client), one registry per service. The hot paths record
 * through a few named methods (an operation, an append, a bind, an agent report); gauges are read
 * only when Prometheus scrapes (`watch`). Every label takes values from a small fixed set: root
 * field names of the schema, error codes, route templates; never an id.
 */
import { getHeapStatistics } from "node:v8";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ProjectionStatus } from "../reactors/projector/progress.js";
import { DEVICE_LIFECYCLE_STATES } from "../domain/inventory/device-lifecycle.js";
import { DeviceStateTracker, type HostDevicesSample } from "./device-states.js";
import { FleetExposition, type FleetHostSample } from "./fleet-exposition.js";
import { DutyCycle, type Pacing } from "../infra/duty-cycle.js";

/** What GraphQL and REST front doors record per operation. */
export interface OperationMetrics {
  /** One GraphQL operation: its root field (bounded by the schema), type, and "OK" or its first error code. */
  graphqlOperation(operation: string, type: string, code: string, seconds: number): void;
  /**
   * One REST request: `route` is the route's template ("/v2/accelerator_requests/{uuid}"), never
   * the path itself; `status` the HTTP status code.
   */
  restOperation(route: string, method: string, status: number, seconds: number): void;
  /** An agent's report or digest confirmation, by what it led to. */
  agentReport(result: "written" | "unchanged" | "confirmed" | "not_confirmed" | "busy"): void;
}

/** One host's capacity of one resource class. */
export interface CapacitySample {
  hostname: string;
  resourceClass: string;
  total: number;
  used: number;
  reserved: number;
}

/** Whether a host's agent reports on time, and for how long it has been silent. */
export interface AgentSample {
  live: boolean;
  silentForS: number;
}

/**
 * The share of the main thread a scrape's work on a large fleet may take (the hosts changed since
 * the last scrape read again, the per-host text): it pauses between steps for the rest. A scrape is
 * not in a hurry (Prometheus waits 10 s by default), and the requests that came meanwhile were the
 * ones that waited: at 10,000 hosts, a third of the binds above 50 ms came during a scrape.
 */
export const SCRAPE_SHARE = 0.5;

/** The pacing of one scrape's work (and of the fleet's reads the scrapes make). */
export const scrapePacing = (): Pacing => new DutyCycle(SCRAPE_SHARE);

/** Read at scrape time. */
export interface MetricSources {
  projections?: () => readonly ProjectionStatus[];
  openSubscriptions?: () => number;
  bindsInFlight?: () => number;
  /** Whole host reports being taken and waiting for their turn (api/report-admission.ts). */
  reportAdmission?: () => { inFlight: number; queued: number };
  /**
   * Read at each scrape: each host's capacity per resource class and its devices with their
   * lifecycle states, a host's object kept while nothing of it changed (fleetFeed in
   * projections/resource-providers/queries.ts); a read model being rebuilt gives none.
   */
  fleet?: () => Promise<ReadonlyArray<FleetHostSample & HostDevicesSample>>;
  /** The liveness of a host's agent (asked for each host with capacity). */
  agent?: (hostname: string) => AgentSample;
}

let processMetrics: Registry | undefined;
/** Process metrics (CPU, memory, event-loop lag, GC), one set per process however many services it runs (tests). */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
    // Beside nodejs_heap_size_used_bytes: the room the heap has before node stops the process out
    // of memory (docs/deployment.md, "Memory").
    new Gauge({
      name: "cyborg_heap_size_limit_bytes",
      help: "The JavaScript heap's size limit (node's --max-old-space-size, or V8's default for this machine)",
      registers: [processMetrics],
      collect() {
        this.set(getHeapStatistics().heap_size_limit);
      },
    });
  }
  return processMetrics;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A device's stay in a state: from a scrape interval to a week. */
const STATE_BUCKETS = [30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86_400, 3 * 86_400, 7 * 86_400];
const BIND_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Distinct values one label may take before the rest are counted as "other" (a guard, not a budget). */
const MAX_VALUES_PER_LABEL = 200;

export class Metrics implements OperationMetrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};
  private readonly seen = new Map<string, Set<string>>();
  /** The per-host families, written apart from the registry (fleet-exposition.ts). */
  private readonly fleetText = new FleetExposition();
  /** Devices per lifecycle state at the last scrape that could read them (none before). */
  private deviceCounts: Readonly<Record<string, number>> | undefined;
  private readonly deviceStates = new DeviceStateTracker();
  private readonly now: () => number;
  private readonly processMetrics: boolean;

  private readonly graphqlTotal = new Counter({
    name: "cyborg_graphql_operations_total",
    help: "GraphQL operations over HTTP, by root field, operation type and result code (OK or the first error's code)",
    labelNames: ["operation", "type", "code"] as const,
    registers: [this.registry],
  });
  private readonly graphqlSeconds = new Histogram({
    name: "cyborg_graphql_operation_duration_seconds",
    help: "Time from receiving a GraphQL operation over HTTP to its answer",
    labelNames: ["operation", "type", "code"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly restTotal = new Counter({
    name: "cyborg_rest_operations_total",
    help: "REST requests by route template, method and status code",
    labelNames: ["route", "method", "status"] as const,
    registers: [this.registry],
  });
  private readonly restSeconds = new Histogram({
    name: "cyborg_rest_operation_duration_seconds",
    help: "Time from receiving a REST request to its answer",
    labelNames: ["route", "method", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly appendSeconds = new Histogram({
    name: "cyborg_eventstore_append_duration_seconds",
    help: "Event-store appends (append: one stream; appendSequence: a bind's streams in one commit) by result",
    labelNames: ["operation", "result"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly appendedEvents = new Counter({
    name: "cyborg_eventstore_appended_events_total",
    help: "Events written to the log by this process",
    registers: [this.registry],
  });
  private readonly conflicts = new Counter({
    name: "cyborg_eventstore_conflicts_total",
    help: "Appends refused for a stale expected revision (or a reused event id); the command is decided again and retried",
    labelNames: ["operation"] as const,
    registers: [this.registry],
  });
  private readonly bindSeconds = new Histogram({
    name: "cyborg_bind_duration_seconds",
    help: "From an ARQ's bind start to BOUND or BIND_FAILED, as the binder sees the log",
    labelNames: ["outcome"] as const,
    buckets: BIND_BUCKETS,
    registers: [this.registry],
  });
  private readonly waitSeconds = new Histogram({
    name: "cyborg_read_your_writes_wait_seconds",
    help: "How long a write's answer waited for the read models to show the log up to it (read-your-writes)",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly batchSeconds = new Histogram({
    name: "cyborg_projection_batch_duration_seconds",
    help: "From a batch of events reaching the projector until every read model committed it",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly agentReports = new Counter({
    name: "cyborg_agent_reports_total",
    help: "Host agents' reports: written (the inventory changed), unchanged (a full report that wrote nothing), confirmed (a digest confirmed: nothing sent), not_confirmed (the agent sends the full report next), busy (a full report refused while too many were taken: REPORT_MAX_IN_FLIGHT, REPORT_MAX_QUEUED)",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });

  private readonly invariantRepairs = new Counter({
    name: "cyborg_invariant_repairs_total",
    help: "Repairs by the invariant checker of what a decision spanning streams left half done (action `left`: found, not repairable safely)",
    labelNames: ["violation", "action"] as const,
    registers: [this.registry],
  });

  private readonly retentionEvents = new Counter({
    name: "cyborg_retention_archived_events_total",
    help: "Events retention moved from the live log into archive segments",
    registers: [this.registry],
  });

  private readonly retentionRuns = new Counter({
    name: "cyborg_retention_runs_total",
    help: "Retention runs, by outcome (archived, nothing_due, failed)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  private readonly evictionNotices = new Counter({
    name: "cyborg_eviction_notices_total",
    help: "Eviction notices given to the holders of devices with a NoExecute taint",
    registers: [this.registry],
  });

  private readonly stateSeconds = new Histogram({
    name: "cyborg_device_state_duration_seconds",
    help: "How long a device stayed in a lifecycle state, observed when a scrape first sees it in another (as fine as the scrape interval)",
    labelNames: ["state"] as const,
    buckets: STATE_BUCKETS,
    registers: [this.registry],
  });

  /** now: the clock the stays in a state are timed by (tests give their own). */
  constructor(opts: { processMetrics?: boolean; now?: () => number } = {}) {
    this.now = opts.now ?? Date.now;
    const sources = () => this.sources;
    new Gauge({
      name: "cyborg_projection_lag_events",
      help: "Events in the log that the read model has not applied yet",
      labelNames: ["projection"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const p of sources().projections?.() ?? []) this.set({ projection: p.name }, p.lagEvents ?? 0);
      },
    });
    new Gauge({
      name: "cyborg_projection_lag_seconds",
      help: "Age of the oldest event the read model has not applied (0 when caught up)",
      labelNames: ["projection"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const p of sources().projections?.() ?? []) this.set({ projection: p.name }, p.lagMs / 1000);
      },
    });
    new Gauge({
      name: "cyborg_projection_live",
      help: "1 when the read model is live (caught up and running), 0 while catching up, rebuilding or stopped",
      labelNames: ["projection"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const p of sources().projections?.() ?? []) this.set({ projection: p.name }, p.state === "live" ? 1 : 0);
      },
    });
    new Gauge({
      name: "cyborg_binds_in_flight",
      help: "ARQs in BIND_STARTED (as the binder of this process sees them)",
      registers: [this.registry],
      collect() {
        this.set(sources().bindsInFlight?.() ?? 0);
      },
    });
    new Gauge({
      name: "cyborg_agent_reports_in_progress",
      help: "Whole host reports being taken (state=taken, at most REPORT_MAX_IN_FLIGHT) and waiting for their turn (state=queued, at most REPORT_MAX_QUEUED)",
      labelNames: ["state"] as const,
      registers: [this.registry],
      collect() {
        const load = sources().reportAdmission?.() ?? { inFlight: 0, queued: 0 };
        this.set({ state: "taken" }, load.inFlight);
        this.set({ state: "queued" }, load.queued);
      },
    });
    new Gauge({
      name: "cyborg_subscriptions_open",
      help: "acceleratorRequestBound subscriptions open on this process",
      registers: [this.registry],
      collect() {
        this.set(sources().openSubscriptions?.() ?? 0);
      },
    });
    this.deviceGauge();
    this.processMetrics = opts.processMetrics !== false;
  }

  /** Devices per lifecycle state (the per-host families are written by fleet-exposition.ts). */
  private deviceGauge(): void {
    const deviceCounts = () => this.deviceCounts;
    new Gauge({
      name: "cyborg_devices",
      help: "Devices per lifecycle state (AVAILABLE TAINTED DRAINING DRAINED CLEANING QUALIFYING FAILED; docs/device-health.md)",
      labelNames: ["state"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const counts = deviceCounts();
        if (counts) for (const state of DEVICE_LIFECYCLE_STATES) this.set({ state }, counts[state] ?? 0);
      },
    });
  }

  /** Where the scrape-time gauges read from (set once the roles have started). */
  watch(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  graphqlOperation(operation: string, type: string, code: string, seconds: number): void {
    const labels = { operation: this.bound("operation", operation), type, code: this.bound("code", code) };
    this.graphqlTotal.inc(labels);
    this.graphqlSeconds.observe(labels, seconds);
  }

  restOperation(route: string, method: string, status: number, seconds: number): void {
    const labels = { route: this.bound("route", route), method: this.bound("method", method.toUpperCase()), status: String(status) };
    this.restTotal.inc(labels);
    this.restSeconds.observe(labels, seconds);
  }

  /** One append; `events` were written (a refused sequence may have written its first steps). */
  append(operation: "append" | "appendSequence", result: "ok" | "conflict" | "error", seconds: number, events: number): void {
    this.appendSeconds.observe({ operation, result }, seconds);
    if (result === "conflict") this.conflicts.inc({ operation });
    if (events > 0) this.appendedEvents.inc(events);
  }

  /** A write's wait for the read models (read-your-writes). */
  readYourWritesWait(seconds: number): void {
    this.waitSeconds.observe(seconds);
  }

  /** A projector batch, from reaching the projector to every model's commit. */
  projectionBatch(seconds: number): void {
    this.batchSeconds.observe(seconds);
  }

  bindResolved(outcome: "bound" | "failed", seconds: number): void {
    this.bindSeconds.observe({ outcome }, Math.max(0, seconds));
  }

  retentionRun(outcome: "archived" | "nothing_due" | "failed", events: number): void {
    this.retentionRuns.inc({ outcome });
    if (events > 0) this.retentionEvents.inc(events);
  }

  invariantRepair(violation: string, action: string): void {
    this.invariantRepairs.inc({ violation, action });
  }

  evictionNotice(): void {
    this.evictionNotices.inc();
  }

  agentReport(result: "written" | "unchanged" | "confirmed" | "not_confirmed" | "busy"): void {
    this.agentReports.inc({ result });
  }

  /** The Prometheus text format, in chunks to send one after another, and its content type. */
  async scrape(): Promise<{ contentType: string; chunks: string[] }> {
    // A read model being rebuilt answers UNAVAILABLE: the per-host samples are left out meanwhile.
    const fleet = await this.sources.fleet?.().catch(() => undefined);
    this.deviceCounts = undefined;
    if (fleet) {
      const { counts, ended } = this.deviceStates.update(fleet, this.now());
      this.deviceCounts = counts;
      for (const stay of ended) this.stateSeconds.observe({ state: stay.state }, stay.seconds);
    }
    const own = [await this.registry.metrics(), ...(await this.fleetText.render(fleet ?? [], this.sources.agent, scrapePacing()))];
    return { contentType: this.registry.contentType, chunks: this.processMetrics ? [await processRegistry().metrics(), ...own] : own };
  }

  /** A value a caller names: kept while the label has few values, "other" past that. */
  private bound(label: string, value: string): string {
    let values = this.seen.get(label);
    if (!values) this.seen.set(label, (values = new Set()));
    if (values.has(value)) return value;
    if (values.size >= MAX_VALUES_PER_LABEL) return "other";
    values.add(value);
    return value;
  }
}
